//! Prompt prefixes kept on disk between workers: the keys and values of a worker's first long
//! prompt, saved once, so that the next worker of the same model whose first prompt starts the
//! same way loads them instead of decoding them again. Each run of a mission starts a fresh
//! worker whose first prompt (system prompt, tools, task) is the same from seed to seed; on two
//! cores the 1.5B spends about 80 s on its 2,400 tokens.
//!
//! A state file (`.kv`) holds one sequence's state (`llama_state_seq_save_file`); beside it a
//! list (`.tokens`) holds the state file's length and SHA-256 and the tokens it was computed
//! from. llama.cpp reads a state file without checking it (a short one makes it abort the
//! process), so a state file is handed to it only when its length and hash are the ones its
//! list recorded, and the tokens llama.cpp reads back must be the list's. The name carries the
//! store's key (the model file's SHA-256 and the executable's own SHA-256, so another model or
//! another build of llama.cpp never reads it) and a hash of the tokens. A file that fails a
//! check or fails to load is deleted and the prompt decoded as usual.
//!
//! Models with a sliding attention window are left out by the engine: their saved state holds
//! only the window's last positions, and a prefix shorter than the saved prompt would lack the
//! positions before it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use llama_cpp_2::token::LlamaToken;
use rein_protocol::digest::hash_file;
use sha2::{Digest, Sha256};

use crate::prefix::common_prefix;

/// Prompts shorter than this are not worth a file (they decode in seconds).
pub const MIN_STORED_TOKENS: usize = 512;

/// State files kept in a store folder, of every model and build; the least recently used go
/// first.
pub const MAX_STORED_PREFIXES: usize = 8;

/// Bytes of state files kept in a store folder; the least recently used go first.
pub const MAX_STORED_BYTES: u64 = 2 << 30;

/// A temporary or half-stored file older than this belongs to a worker that died while saving.
const ABANDONED_AFTER: Duration = Duration::from_secs(600);

/// The first bytes of a token list.
const LIST_MAGIC: &[u8; 8] = b"REINKV01";

/// Where a worker's prefixes live and the key that makes them its own.
#[derive(Debug, Clone)]
pub struct PrefixStore {
    dir: PathBuf,
    model_sha256: String,
    /// Computed on first use: hashing the executable takes a moment.
    key: OnceLock<String>,
}

/// A stored prompt that shares a prefix with a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPrefix {
    /// The state file (`.kv`).
    pub path: PathBuf,
    /// The tokens it holds, all of them (loading it loads them all; the engine then drops
    /// what the new prompt does not share).
    pub tokens: Vec<LlamaToken>,
    /// How many leading tokens it shares with the new prompt.
    pub shared: usize,
    /// The state file's length and SHA-256 (hex), as stored.
    pub bytes: u64,
    pub sha256: String,
}

/// A state file's token list as read: (state length, state SHA-256 in hex, tokens).
type List = (u64, String, Vec<LlamaToken>);

impl PrefixStore {
    /// A store in `dir` for the model whose file has SHA-256 `model_sha256`.
    pub fn new(dir: impl Into<PathBuf>, model_sha256: &str) -> PrefixStore {
        PrefixStore {
            dir: dir.into(),
            model_sha256: model_sha256.to_string(),
            key: OnceLock::new(),
        }
    }

    /// The model's hash and the running executable's own hash (llama.cpp is linked into it, and
    /// another build may lay out its cache otherwise), shortened.
    fn key(&self) -> &str {
        self.key.get_or_init(|| {
            let build = std::env::current_exe()
                .and_then(|exe| hash_file(&exe))
                .map(|(sha256, _)| sha256)
                // Without its own hash the key still differs per model; a build change is
                // then caught by llama.cpp's own layout checks only.
                .unwrap_or_else(|_| "unknown-build".into());
            hex::encode(Sha256::digest(
                format!("{}\n{build}", self.model_sha256).as_bytes(),
            ))[..16]
                .to_string()
        })
    }

    /// The stored prompt sharing the longest prefix with `prompt`, if it shares at least
    /// [`MIN_STORED_TOKENS`]; one longer than `max_tokens` (a context that cannot hold it,
    /// all of it being loaded) is passed over, not dropped.
    pub fn best_match(&self, prompt: &[LlamaToken], max_tokens: usize) -> Option<StoredPrefix> {
        let mut best: Option<StoredPrefix> = None;
        for (kv, (bytes, sha256, tokens)) in self.own_entries() {
            if tokens.len() > max_tokens {
                continue;
            }
            let shared = common_prefix(&tokens, prompt);
            if shared >= MIN_STORED_TOKENS && best.as_ref().is_none_or(|b| shared > b.shared) {
                best = Some(StoredPrefix {
                    path: kv,
                    tokens,
                    shared,
                    bytes,
                    sha256,
                });
            }
        }
        best
    }

    /// Whether the state file of `found` is, byte for byte, the one that was stored: only then
    /// may llama.cpp read it.
    pub fn intact(&self, found: &StoredPrefix) -> bool {
        let length = std::fs::metadata(&found.path).map(|m| m.len()).ok();
        length == Some(found.bytes)
            && hash_file(&found.path).is_ok_and(|(sha256, _)| sha256 == found.sha256)
    }

    /// Whether `prompt` is worth storing after `shared` of its tokens came from the store: long
    /// enough, and holding at least [`MIN_STORED_TOKENS`] more than what was there.
    pub fn worth_storing(prompt: &[LlamaToken], shared: usize) -> bool {
        prompt.len().saturating_sub(shared) >= MIN_STORED_TOKENS
    }

    /// The state file of `tokens`; its token list sits beside it (`.tokens`).
    pub fn path_for(&self, tokens: &[LlamaToken]) -> PathBuf {
        self.dir
            .join(format!("{}-{}.kv", self.key(), token_hash(tokens)))
    }

    /// Saves `tokens`' state with `save` (given a temporary path in the store), then its token
    /// list with the state's length and hash; each is synced and moved into place whole, the
    /// list last, so a reader never sees half of either. Then trims the store to its caps.
    /// Returns how many state files the trim removed.
    pub fn store(
        &self,
        tokens: &[LlamaToken],
        save: impl FnOnce(&Path) -> bool,
    ) -> std::io::Result<usize> {
        std::fs::create_dir_all(&self.dir)?;
        let kv = self.path_for(tokens);
        let temp = |path: &Path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.dir.join(format!(".{name}.{}.tmp", std::process::id()))
        };
        let kv_temp = temp(&kv);
        let saved = save(&kv_temp);
        let synced = saved
            && std::fs::File::open(&kv_temp)
                .and_then(|f| f.sync_all())
                .is_ok();
        if !synced {
            let _ = std::fs::remove_file(&kv_temp);
            return Err(std::io::Error::other("llama.cpp could not save the state"));
        }
        let stored = (|| {
            let (sha256, bytes) = hash_file(&kv_temp)?;
            let sha256 = hex::decode(sha256).map_err(std::io::Error::other)?;
            let list = kv.with_extension("tokens");
            let list_temp = temp(&list);
            let mut content = Vec::with_capacity(48 + 4 * tokens.len());
            content.extend_from_slice(LIST_MAGIC);
            content.extend_from_slice(&bytes.to_le_bytes());
            content.extend_from_slice(&sha256);
            content.extend(tokens.iter().flat_map(|t| t.0.to_le_bytes()));
            std::fs::write(&list_temp, content)?;
            std::fs::File::open(&list_temp)?.sync_all()?;
            std::fs::rename(&kv_temp, &kv)?;
            std::fs::rename(&list_temp, &list)?;
            std::fs::File::open(&self.dir)?.sync_all()
        })();
        if let Err(e) = stored {
            let _ = std::fs::remove_file(&kv_temp);
            return Err(e);
        }
        Ok(self.trim())
    }

    /// Marks a state file as just used, so trimming keeps it.
    pub fn touch(&self, path: &Path) {
        if let Ok(f) = std::fs::File::options().append(true).open(path) {
            let _ = f.set_modified(SystemTime::now());
        }
    }

    /// Drops a state file that could not be used, and its token list.
    pub fn discard(&self, path: &Path) {
        let _ = std::fs::remove_file(path.with_extension("tokens"));
        let _ = std::fs::remove_file(path);
    }

    /// Removes what a dead worker left (temporary files, a state file whose list never came)
    /// once older than [`ABANDONED_AFTER`], then the least recently used state files of any
    /// key past [`MAX_STORED_PREFIXES`] or [`MAX_STORED_BYTES`]; returns how many state files
    /// went.
    fn trim(&self) -> usize {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let now = SystemTime::now();
        let mut states: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut removed = 0;
        for entry in read.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(now);
            let abandoned = now.duration_since(modified).unwrap_or_default() > ABANDONED_AFTER;
            if name.starts_with('.') && name.ends_with(".tmp") {
                if abandoned {
                    let _ = std::fs::remove_file(&path);
                }
            } else if name.ends_with(".kv") {
                if !path.with_extension("tokens").exists() {
                    if abandoned {
                        let _ = std::fs::remove_file(&path);
                        removed += 1;
                    }
                    continue;
                }
                states.push((modified, meta.len(), path));
            } else if name.ends_with(".tokens") && !path.with_extension("kv").exists() {
                let _ = std::fs::remove_file(&path);
            }
        }
        // Newest first; keep while both caps hold.
        states.sort_by_key(|(modified, _, _)| std::cmp::Reverse(*modified));
        let mut kept_bytes = 0u64;
        for (i, (_, bytes, path)) in states.iter().enumerate() {
            kept_bytes = kept_bytes.saturating_add(*bytes);
            if i >= MAX_STORED_PREFIXES || (i > 0 && kept_bytes > MAX_STORED_BYTES) {
                self.discard(path);
                removed += 1;
            }
        }
        removed
    }

    /// This key's state files with their token lists (a state file without a readable list
    /// is left out).
    fn own_entries(&self) -> Vec<(PathBuf, List)> {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let key = self.key().to_string();
        read.flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_prefix(&key)?
                    .strip_prefix('-')?
                    .strip_suffix(".kv")?;
                let kv = e.path();
                let list = read_list(&kv.with_extension("tokens"))?;
                Some((kv, list))
            })
            .collect()
    }
}

/// A token list as [`PrefixStore::store`] writes it, or `None` if it is not one.
fn read_list(path: &Path) -> Option<List> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(LIST_MAGIC)?;
    if rest.len() < 40 || (rest.len() - 40) % 4 != 0 {
        return None;
    }
    let length = u64::from_le_bytes(rest[..8].try_into().ok()?);
    let sha256 = hex::encode(&rest[8..40]);
    let tokens = rest[40..]
        .chunks_exact(4)
        .map(|c| LlamaToken(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    Some((length, sha256, tokens))
}

fn token_hash(tokens: &[LlamaToken]) -> String {
    let mut h = Sha256::new();
    for t in tokens {
        h.update(t.0.to_le_bytes());
    }
    hex::encode(h.finalize())[..32].to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A context that holds any stored prompt.
    const ANY: usize = usize::MAX;

    /// `n` tokens counting from `from`.
    fn run_of(from: i32, n: usize) -> Vec<LlamaToken> {
        (from..from + n as i32).map(LlamaToken).collect()
    }

    fn joined(parts: &[Vec<LlamaToken>]) -> Vec<LlamaToken> {
        parts.concat()
    }

    fn saved(text: &'static str) -> impl FnOnce(&Path) -> bool {
        move |p: &Path| std::fs::write(p, text).is_ok()
    }

    #[test]
    fn the_stored_prompt_sharing_the_longest_prefix_is_found_if_it_shares_enough() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::new(dir.path(), "aa");
        let system = run_of(0, 600);
        let seed_one = joined(&[system.clone(), run_of(10_000, 700)]);
        let other_task = joined(&[system.clone(), run_of(20_000, 50)]);
        store.store(&seed_one, saved("one")).unwrap();
        store.store(&other_task, saved("other")).unwrap();
        // The same first prompt: all of it.
        let found = store.best_match(&seed_one, ANY).unwrap();
        assert_eq!((found.shared, found.tokens.len()), (1300, 1300));
        assert_eq!(std::fs::read_to_string(&found.path).unwrap(), "one");
        // A new task after the same system prompt: the system prompt part.
        let new_task = joined(&[system.clone(), run_of(30_000, 400)]);
        let found = store.best_match(&new_task, ANY).unwrap();
        assert_eq!(found.shared, 600);
        // Too little in common: nothing.
        let short = joined(&[run_of(0, MIN_STORED_TOKENS - 1), run_of(40_000, 900)]);
        assert_eq!(store.best_match(&short, ANY), None);
        assert_eq!(store.best_match(&run_of(5, 2000), ANY), None);
        // A context too small to hold the stored prompt whole: passed over, still there.
        assert_eq!(store.best_match(&seed_one, 1299).unwrap().shared, 600);
        assert_eq!(store.best_match(&seed_one, 649), None);
        assert!(store.best_match(&seed_one, 1300).is_some());
    }

    #[test]
    fn another_model_never_sees_a_prefix_and_a_failed_save_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let a = PrefixStore::new(dir.path(), "aa");
        let b = PrefixStore::new(dir.path(), "bb");
        a.store(&run_of(0, 600), saved("a")).unwrap();
        assert!(a.best_match(&run_of(0, 600), ANY).is_some());
        assert!(b.best_match(&run_of(0, 600), ANY).is_none());
        assert!(b.store(&run_of(0, 700), |_| false).is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "a's state and token list only: {names:?}");
    }

    #[test]
    fn a_state_without_its_token_list_or_with_a_torn_one_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::new(dir.path(), "aa");
        let prompt = run_of(0, 600);
        store.store(&prompt, saved("x")).unwrap();
        let list = store.path_for(&prompt).with_extension("tokens");
        let bytes = std::fs::read(&list).unwrap();
        std::fs::write(&list, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(store.best_match(&prompt, ANY), None);
        std::fs::remove_file(&list).unwrap();
        assert_eq!(store.best_match(&prompt, ANY), None);
        store.discard(&store.path_for(&prompt));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// The state files (`.kv`) in `dir`, of any key.
    fn state_files(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "kv"))
            .collect()
    }

    fn age(path: &Path, by: Duration) {
        std::fs::File::options()
            .append(true)
            .open(path)
            .unwrap()
            .set_modified(SystemTime::now() - by)
            .unwrap();
    }

    /// Red team: llama.cpp aborts the process on a state file cut short (it clamps each read
    /// to the bytes left, then asserts on the count), so a file is checked before it is read.
    #[test]
    fn a_state_file_cut_short_or_altered_after_it_was_stored_is_not_intact() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::new(dir.path(), "aa");
        let prompt = run_of(0, 600);
        let payload = "0123456789abcdef".repeat(64);
        let written = payload.clone();
        store
            .store(&prompt, move |p: &Path| std::fs::write(p, written).is_ok())
            .unwrap();
        let found = store.best_match(&prompt, ANY).unwrap();
        assert!(store.intact(&found));
        let kv = store.path_for(&prompt);
        let f = std::fs::File::options().write(true).open(&kv).unwrap();
        f.set_len(payload.len() as u64 - 1).unwrap();
        drop(f);
        assert!(!store.intact(&found), "one byte short");
        let mut bytes = payload.into_bytes();
        bytes[500] ^= 0x01;
        std::fs::write(&kv, &bytes).unwrap();
        assert!(!store.intact(&found), "one byte changed");
        std::fs::remove_file(&kv).unwrap();
        assert!(!store.intact(&found), "gone");
    }

    /// Red team: what dead workers leave (a state file whose list never came, temporary
    /// files) and the files of earlier builds are removed, and the caps hold over every key.
    #[test]
    fn leftovers_of_dead_workers_and_old_builds_do_not_stay() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::new(dir.path(), "aa");
        let prompt = |i: usize| run_of(100_000 * i as i32, 600);
        // A state file whose list never arrived, an hour old.
        store.store(&prompt(0), saved("orphan")).unwrap();
        std::fs::remove_file(store.path_for(&prompt(0)).with_extension("tokens")).unwrap();
        age(&store.path_for(&prompt(0)), Duration::from_secs(3600));
        // A temporary file of a worker killed while saving, a day old; a fresh one is kept.
        let dead = dir.path().join(".x.kv.4194000.tmp");
        std::fs::write(&dead, [0u8; 16]).unwrap();
        age(&dead, Duration::from_secs(86_400));
        let saving = dir.path().join(".y.kv.4194001.tmp");
        std::fs::write(&saving, [0u8; 16]).unwrap();
        // Eight files of an earlier build, ninety days old.
        let other = PrefixStore::new(dir.path(), "old-build");
        for i in 1..=MAX_STORED_PREFIXES {
            other.store(&prompt(i), saved("x")).unwrap();
            age(
                &other.path_for(&prompt(i)),
                Duration::from_secs(90 * 86_400),
            );
        }
        store.store(&prompt(99), saved("new")).unwrap();
        assert!(!store.path_for(&prompt(0)).exists(), "orphan kept");
        assert!(!dead.exists(), "dead worker's temp file kept");
        assert!(saving.exists(), "a save in progress was removed");
        let kept = state_files(dir.path());
        assert_eq!(kept.len(), MAX_STORED_PREFIXES, "{kept:?}");
        assert!(
            store.best_match(&prompt(99), ANY).is_some(),
            "the newest went"
        );
    }

    #[test]
    fn only_a_prompt_that_adds_enough_is_worth_storing() {
        let prompt = run_of(0, 2000);
        assert!(PrefixStore::worth_storing(&prompt, 0));
        assert!(PrefixStore::worth_storing(
            &prompt,
            2000 - MIN_STORED_TOKENS
        ));
        assert!(!PrefixStore::worth_storing(
            &prompt,
            2000 - MIN_STORED_TOKENS + 1
        ));
        assert!(!PrefixStore::worth_storing(
            &run_of(0, MIN_STORED_TOKENS - 1),
            0
        ));
    }

    #[test]
    fn past_the_cap_the_least_recently_used_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::new(dir.path(), "aa");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        let prompt = |i: usize| run_of(100_000 * i as i32, 600);
        for i in 0..MAX_STORED_PREFIXES {
            store.store(&prompt(i), saved("x")).unwrap();
            let f = std::fs::File::options()
                .append(true)
                .open(store.path_for(&prompt(i)))
                .unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64))
                .unwrap();
        }
        // The oldest is used again, so the second oldest goes.
        store.touch(&store.path_for(&prompt(0)));
        let dropped = store
            .store(&prompt(MAX_STORED_PREFIXES), saved("x"))
            .unwrap();
        assert_eq!(dropped, 1);
        assert!(store.best_match(&prompt(0), ANY).is_some());
        assert!(store.best_match(&prompt(1), ANY).is_none());
        assert!(!store.path_for(&prompt(1)).with_extension("tokens").exists());
        assert!(store
            .best_match(&prompt(MAX_STORED_PREFIXES), ANY)
            .is_some());
    }
}
