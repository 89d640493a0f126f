#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Tests with the real packaged 0.5B model (`rein models pull qwen2.5-coder-0.5b`). They run in
//! CI. Set REIN_SKIP_MODEL_TESTS=1 to skip them on a machine without the model; without it a
//! missing model is a failure, so CI can never pass them vacuously.

use std::process::Command;

use rein_models::embedded::{launch_for, EmbeddedModel};
use rein_models::{
    Catalog, ChatMessage, ChooseRequest, CompletionRequest, DataDir, Model, Prompt, SamplingProfile,
};

const MODEL: &str = "qwen2.5-coder-0.5b";

fn skip() -> bool {
    std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1")
}

fn start() -> EmbeddedModel {
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get(MODEL).unwrap();
    let dir = DataDir::from_env().unwrap();
    let launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into())
        .unwrap_or_else(|e| panic!("{e}\n(pull the model first, or set REIN_SKIP_MODEL_TESTS=1)"));
    EmbeddedModel::start(launch).unwrap()
}

#[test]
fn real_model_loads_completes_constrains_and_chooses() {
    if skip() {
        return;
    }
    let mut model = start();
    assert_eq!(model.identity().architecture, "qwen2");
    assert!(
        model.identity().name.contains("0.5B"),
        "{:?}",
        model.identity()
    );

    let mut streamed = String::new();
    let request = CompletionRequest::new(
        Prompt::chat(vec![ChatMessage::user("Say hello in one short sentence.")]),
        24,
        SamplingProfile::JUDGE,
    );
    let completion = model
        .complete(&request, &mut |t| streamed.push_str(t))
        .unwrap();
    assert!(!completion.text.trim().is_empty());
    assert_eq!(streamed, completion.text);
    assert!(completion.completion_tokens <= 24);

    // The same prompt again is served from the KV cache.
    let again = model.complete(&request, &mut |_| {}).unwrap();
    assert!(again.cached_tokens + 1 >= again.prompt_tokens, "{again:?}");
    assert_eq!(again.text, completion.text, "greedy decoding is repeatable");

    let mut constrained = CompletionRequest::new(
        Prompt::chat(vec![ChatMessage::user(
            "Which file should be read first to learn about the project? Answer as an action.",
        )]),
        96,
        SamplingProfile::ACTOR,
    );
    constrained.json_schema = Some(serde_json::json!({
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": 120},
            "action": {"const": "read_file"},
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "maxLength": 60}},
                "required": ["path"],
                "additionalProperties": false
            }
        },
        "required": ["thought", "action", "parameters"],
        "additionalProperties": false
    }));
    let reply = model.complete(&constrained, &mut |_| {}).unwrap();
    let action: serde_json::Value = serde_json::from_str(&reply.text)
        .unwrap_or_else(|e| panic!("constrained reply is not JSON ({e}): {}", reply.text));
    assert_eq!(action["action"], "read_file");
    assert!(action["parameters"]["path"].is_string());
    // The separators are fixed to the prompt's (no free whitespace between tokens).
    assert!(
        reply.text.starts_with("{\"thought\": \"")
            && reply
                .text
                .contains("\", \"action\": \"read_file\", \"parameters\": {\"path\": \""),
        "{}",
        reply.text
    );

    let labels: Vec<String> = ["general", "explore", "summarize", "related", "report"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let choice = model
        .choose(&ChooseRequest {
            prompt: Prompt::chat(vec![ChatMessage::user(
                "Classify the request into one intent: general, explore, summarize, related, report.\nRequest: Summarize the quarterly report in docs/q3.md\nAnswer with the intent only.",
            )]),
            labels: labels.clone(),
        })
        .unwrap();
    let sum: f64 = choice.probabilities.iter().map(|p| p.probability).sum();
    assert!((sum - 1.0).abs() < 1e-6, "probabilities sum to {sum}");
    assert_eq!(choice.probabilities.len(), 5);
    assert!(choice
        .probabilities
        .iter()
        .all(|p| (0.0..=1.0).contains(&p.probability)));
}

#[test]
fn real_model_answers_through_rein_ask() {
    if skip() {
        return;
    }
    let output = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args([
            "ask",
            "--json",
            "--model",
            MODEL,
            "--max-tokens",
            "16",
            "Name one colour.",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!doc["text"].as_str().unwrap().trim().is_empty());
    assert_eq!(doc["model"]["architecture"], "qwen2");
}

#[test]
fn real_model_keeps_serving_after_its_file_is_deleted() {
    if skip() {
        return;
    }
    // A copy of the verified file, in a data dir of our own, that we then delete. Not a hard
    // link: linking and unlinking change the shared file's ctime, which the tests running
    // beside this one rightly read as "changed between its hash check and its loading".
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get(MODEL).unwrap();
    let source = DataDir::from_env().unwrap().model_path(entry);
    let home = tempfile::tempdir().unwrap();
    let dir = DataDir::at(home.path());
    std::fs::create_dir_all(dir.models_dir()).unwrap();
    std::fs::copy(&source, dir.model_path(entry)).unwrap();
    let launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into()).unwrap();
    let mut model = EmbeddedModel::start(launch).unwrap();
    std::fs::remove_file(dir.model_path(entry)).unwrap();
    let request = CompletionRequest::new(Prompt::raw("1, 2, 3,"), 4, SamplingProfile::JUDGE);
    let reply = model.complete(&request, &mut |_| {}).unwrap();
    assert!(reply.completion_tokens > 0);
    drop(model);
    let err = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into()).unwrap_err();
    assert!(err.to_string().contains("rein models pull"), "{err}");
}

/// A real-model test of what `choose` means: on prompts whose answer is plain, the right label
/// must rank first (not only sum to 1), and the labels must hold most of the model's mass.
#[test]
fn real_model_choose_ranks_labelled_prompts() {
    if skip() {
        return;
    }
    let mut model = start();
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "What is the sentiment of this review? Reply with one word only, positive or negative.\nReview: I loved it, the best meal I have had in years.",
            &["positive", "negative"],
            "positive",
        ),
        (
            "What is the sentiment of this review? Reply with one word only, positive or negative.\nReview: Cold food, rude staff, never again.",
            &["positive", "negative"],
            "negative",
        ),
        (
            "Is Paris the capital of France? Reply with one word only, yes or no.",
            &["yes", "no"],
            "yes",
        ),
        (
            "Is the number 7 even? Reply with one word only, yes or no.",
            &["yes", "no"],
            "no",
        ),
    ];
    for (prompt, labels, want) in cases {
        let reply = model
            .choose(&ChooseRequest {
                prompt: Prompt::chat(vec![ChatMessage::user(prompt)]),
                labels: labels.iter().map(|s| s.to_string()).collect(),
            })
            .unwrap_or_else(|e| panic!("{prompt}: {e}"));
        let mass = reply
            .label_mass
            .expect("the embedded backend measures label mass");
        eprintln!("{want}: {:?} mass {mass:.3}", reply.probabilities);
        assert_eq!(reply.best().unwrap().0, want, "{prompt}: {reply:?}");
        assert!(
            (rein_models::LABEL_MASS_FLOOR..=1.0).contains(&mass),
            "{mass}"
        );
        let sum: f64 = reply.probabilities.iter().map(|p| p.probability).sum();
        assert!((sum - 1.0).abs() < 1e-6);
    }
}

/// `--model gguf:PATH` runs a local GGUF in a worker, its identity taken from its own header
/// and its hash computed by the parent (in a data dir of its own, so the hash cache starts
/// empty).
#[test]
fn real_model_runs_a_local_gguf_by_path() {
    if skip() {
        return;
    }
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get(MODEL).unwrap();
    let path = DataDir::from_env().unwrap().model_path(entry);
    assert!(
        path.is_file(),
        "pull {MODEL} first, or set REIN_SKIP_MODEL_TESTS=1"
    );
    let home = tempfile::tempdir().unwrap();
    let spec = format!("gguf:{}", path.display());
    let output = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["ask", "--json", "--model", &spec, "--max-tokens", "8"])
        .arg("Name one colour.")
        .env("REIN_HOME", home.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(!doc["text"].as_str().unwrap().trim().is_empty());
    assert_eq!(doc["model"]["spec"], spec.as_str());
    assert_eq!(doc["model"]["name"], entry.gguf_name.as_str());
    assert_eq!(doc["model"]["sha256"], entry.sha256.as_str());
    assert_eq!(doc["model"]["parameters"], entry.parameters);
    assert_eq!(doc["model"]["tensors"], entry.tensors);
    // The hash was cached under the data dir, not beside the user's file.
    let cached = std::fs::read_dir(home.path().join("cache/hashes"))
        .unwrap()
        .count();
    assert_eq!(cached, 1);
}

/// The router's way of asking: a fixed instruction, then the request. The second decision must
/// reuse the instruction from the KV cache, and scoring the labels side by side (one sequence
/// per spelling, the least likely skipped) must give what the same prompt gives from an empty
/// cache.
#[test]
fn real_model_choose_reuses_the_instruction_and_matches_a_cold_cache() {
    if skip() {
        return;
    }
    let mut model = start();
    let ask = |text: &str| ChooseRequest {
        prompt: Prompt::chat(vec![
            ChatMessage::system(
                "You sort requests. Labels: weather (asks about the weather), music (asks \
                 about songs or bands), other. Reply with one lower-case word.",
            ),
            ChatMessage::user(format!(
                "Request:\n{text}\n\nReply with one word: weather, music or other."
            )),
        ]),
        labels: vec!["weather".into(), "music".into(), "other".into()],
    };
    let first = model
        .choose(&ask("will it rain in Leeds tomorrow afternoon?"))
        .unwrap();
    let warm = model
        .choose(&ask("who sang the song Bohemian Rhapsody?"))
        .unwrap();
    assert_eq!(first.best().unwrap().0, "weather", "{first:?}");
    assert!(
        warm.cached_tokens >= 20 && warm.cached_tokens < warm.prompt_tokens,
        "the instruction comes from the cache, the request does not: {warm:?}"
    );
    assert!(warm.prompt_ms.is_some() && warm.cpu_ms.is_some());
    // 3 labels x 4 spellings (as written = lower case) = 12; most are too unlikely to decode.
    assert!(warm.scored_spellings.unwrap() < 12, "{warm:?}");
    model.reset_cache().unwrap();
    let cold = model
        .choose(&ask("who sang the song Bohemian Rhapsody?"))
        .unwrap();
    assert_eq!(cold.cached_tokens, 0);
    for (name, r) in [("warm", &warm), ("cold", &cold)] {
        eprintln!(
            "{name}: {} of {} prompt tokens cached; prompt eval {:.0} ms, whole decision {:.0} ms, \
             CPU {:.0} ms, {} spellings decoded, label mass {:.3}",
            r.cached_tokens,
            r.prompt_tokens,
            r.prompt_ms.unwrap_or(f64::NAN),
            r.elapsed_ms,
            r.cpu_ms.unwrap_or(f64::NAN),
            r.scored_spellings.unwrap_or(0),
            r.label_mass.unwrap_or(f64::NAN)
        );
    }
    for (w, c) in warm.probabilities.iter().zip(&cold.probabilities) {
        assert_eq!(w.label, c.label);
        assert!(
            // Batched and single decodes round differently: 0.015 measured on the 0.5B.
            (w.probability - c.probability).abs() < 0.03,
            "warm {warm:?} cold {cold:?}"
        );
    }
    let (wm, cm) = (warm.label_mass.unwrap(), cold.label_mass.unwrap());
    assert!((wm - cm).abs() < 0.03, "{wm} {cm}");
    // The 0.5B itself ranks this request weather first, warm and cold alike (measured 0.60 and
    // 0.62), so the label is not asserted here: this test is about the cache.
    assert_eq!(warm.best().unwrap().0, cold.best().unwrap().0);
}

/// A worker of `MODEL` whose prompt prefixes go to and come from `store` (or nowhere).
fn start_with_store(store: Option<&std::path::Path>) -> EmbeddedModel {
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get(MODEL).unwrap();
    let dir = DataDir::from_env().unwrap();
    let mut launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into())
        .unwrap_or_else(|e| panic!("{e}\n(pull the model first, or set REIN_SKIP_MODEL_TESTS=1)"));
    launch.prefix_store = store.map(std::path::Path::to_path_buf);
    EmbeddedModel::start(launch).unwrap()
}

#[test]
fn real_model_first_prompt_comes_from_the_prefix_store_and_answers_as_a_cold_one() {
    if skip() {
        return;
    }
    let store = tempfile::tempdir().unwrap();
    let mut system = String::from("You keep the log of a test bench. The log so far:\n");
    for i in 1..=40 {
        system.push_str(&format!(
            "Entry {i}: fixture set {} copied into a fresh sandbox; {} steps; the judge read the report from disk.\n",
            i * 7 % 13,
            i * 3 % 11 + 2
        ));
    }
    let ask = |question: &str| {
        CompletionRequest::new(
            Prompt::chat(vec![
                ChatMessage::system(system.clone()),
                ChatMessage::user(question),
            ]),
            12,
            SamplingProfile::JUDGE,
        )
    };
    let first = ask("How many steps did entry 5 record? Answer with the number.");
    let stored = |dir: &std::path::Path| std::fs::read_dir(dir).unwrap().count();

    // A new worker decodes its first prompt and keeps it (state and token list).
    let cold = start_with_store(Some(store.path()))
        .complete(&first, &mut |_| {})
        .unwrap();
    assert_eq!(cold.cached_tokens, 0, "{cold:?}");
    assert!(cold.prompt_tokens > 700, "{cold:?}");
    assert_eq!(stored(store.path()), 2);

    // The next new worker loads all of it and gives the cold worker's greedy answer. (Not bit
    // for bit the cold logits: the last prompt token is decoded alone after a load and inside a
    // batch cold; see the README's Known gaps.)
    let warm = start_with_store(Some(store.path()))
        .complete(&first, &mut |_| {})
        .unwrap();
    assert_eq!(warm.cached_tokens + 1, warm.prompt_tokens, "{warm:?}");
    assert_eq!(warm.text, cold.text);

    // Another question after the same system prompt: the shared part comes from the store,
    // and the answer is the one a worker without a store gives.
    let other = ask("Which fixture set did entry 9 copy? Answer with the number.");
    let shared = start_with_store(Some(store.path()))
        .complete(&other, &mut |_| {})
        .unwrap();
    let plain = start_with_store(None)
        .complete(&other, &mut |_| {})
        .unwrap();
    assert_eq!(plain.cached_tokens, 0);
    assert!(
        shared.cached_tokens >= 512 && shared.cached_tokens < shared.prompt_tokens,
        "{shared:?}"
    );
    assert_eq!(shared.text, plain.text);
    // Neither added a file: each shared nearly all of its prompt with the stored one.
    assert_eq!(stored(store.path()), 2);

    // A state file cut short (red team: llama.cpp aborts the process on one) or altered is
    // never handed to llama.cpp: it is dropped, the prompt decoded as usual and kept again.
    let kv = std::fs::read_dir(store.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "kv"))
        .unwrap();
    let full = std::fs::metadata(&kv).unwrap().len();
    assert!(full > 1_000_000, "{full}");
    for damage in ["cut 1", "cut 4096", "altered"] {
        match damage {
            "altered" => {
                let mut bytes = std::fs::read(&kv).unwrap();
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0x01;
                std::fs::write(&kv, bytes).unwrap();
            }
            _ => {
                let cut: u64 = damage[4..].parse().unwrap();
                let f = std::fs::File::options().write(true).open(&kv).unwrap();
                f.set_len(full - cut).unwrap();
            }
        }
        let again = start_with_store(Some(store.path()))
            .complete(&first, &mut |_| {})
            .unwrap_or_else(|e| panic!("{damage}: {e}"));
        assert_eq!(again.cached_tokens, 0, "{damage}: {again:?}");
        assert_eq!(again.text, cold.text, "{damage}");
        assert_eq!(std::fs::metadata(&kv).unwrap().len(), full, "{damage}");
        assert_eq!(stored(store.path()), 2, "{damage}");
    }

    // A reset before the first prompt asks for a cold cache: the store does not fill it.
    let mut reset = start_with_store(Some(store.path()));
    reset.reset_cache().unwrap();
    let after_reset = reset.complete(&first, &mut |_| {}).unwrap();
    assert_eq!(after_reset.cached_tokens, 0, "{after_reset:?}");
}

/// The words of `s`, lowercase, punctuation dropped.
fn plain_words(s: &str) -> Vec<String> {
    s.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The longest run of consecutive words of `text` that is also a run of `source` (lowercase,
/// punctuation dropped).
fn longest_copied_run(text: &str, source: &str) -> usize {
    longest_common_run(&plain_words(text), &plain_words(source))
}

/// The longest run of consecutive words `a` and `b` share.
fn longest_common_run(a: &[String], b: &[String]) -> usize {
    let mut best = 0;
    let mut prev = vec![0usize; b.len() + 1];
    for x in a {
        let mut row = vec![0usize; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            if x == y {
                row[j + 1] = prev[j] + 1;
                best = best.max(row[j + 1]);
            }
        }
        prev = row;
    }
    best
}

/// A request that asks the model to copy `text` word for word into the `text` field of a JSON
/// object of at most `max_chars` characters.
fn copy_request(
    text: &str,
    max_tokens: u32,
    max_chars: u32,
    no_paste: Option<rein_models::NoPaste>,
) -> CompletionRequest {
    let mut request = CompletionRequest::new(
        Prompt::chat(vec![ChatMessage::user(format!(
            "Copy this text into the text field, word for word:\n\n{text}"
        ))]),
        max_tokens,
        SamplingProfile::JUDGE,
    );
    request.json_schema = Some(serde_json::json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": max_chars}},
        "required": ["text"],
        "additionalProperties": false
    }));
    request.no_paste = no_paste;
    request
}

#[test]
fn real_model_no_paste_steers_a_copy_off_its_source() {
    if skip() {
        return;
    }
    let paragraph = "The harbour library will replace its paper request forms with a phone app \
        that lets members renew their loans and reserve books from home. The supplier of the \
        catalogue has not delivered the search keys yet, and without them the reservation \
        screen cannot be tested before the launch at the end of June.";
    let mut model = start();
    let ask = |no_paste| copy_request(paragraph, 160, 600, no_paste);
    let free = text_of(&model.complete(&ask(None), &mut |_| {}).unwrap().text);
    let free_run = longest_copied_run(&free, paragraph);
    assert!(free_run >= 20, "asked to copy, the model copies: {free}");
    let steered = model
        .complete(
            &ask(Some(rein_models::NoPaste {
                sources: vec![paragraph.to_string()],
                allowed_tokens: 4,
                own_repeats: false,
                tables: Vec::new(),
                table_run_words: 0,
            })),
            &mut |_| {},
        )
        .unwrap();
    // Still the action's JSON: the penalty never breaks what the grammar forces.
    let text = text_of(&steered.text);
    assert!(text.split_whitespace().count() >= 10, "{text}");
    let run = longest_copied_run(&text, paragraph);
    // The penalty counts tokens, so a dropped comma starts a new run where the words go on:
    // asked outright to copy, the 0.5B got a 16-word run through this way. It still cuts the
    // longest run to well under half.
    assert!(
        run * 2 < free_run,
        "a copied run of {run} words (of {free_run} unsteered) got through the no-paste penalty: {text}"
    );
}

/// The `text` field of a reply to a [`copy_request`].
fn text_of(reply: &str) -> String {
    let doc: serde_json::Value =
        serde_json::from_str(reply).unwrap_or_else(|e| panic!("not JSON ({e}): {reply}"));
    doc["text"].as_str().unwrap().to_string()
}

/// The longest run of consecutive words that `text` holds twice, the two not overlapping
/// (lowercase, punctuation dropped).
fn longest_repeated_run(text: &str) -> usize {
    let words = plain_words(text);
    let mut best = 0;
    for i in 0..words.len() {
        for j in i + 1..words.len() {
            let run = (0..j - i)
                .take_while(|k| j + k < words.len() && words[i + k] == words[j + k])
                .count();
            best = best.max(run);
        }
    }
    best
}

#[test]
fn real_model_no_paste_counts_the_reply_s_own_repeats_only_when_asked() {
    if skip() {
        return;
    }
    let sentence = "The reservation screen cannot be tested until the supplier sends the keys.";
    let mut model = start();
    let thrice = format!("{sentence} {sentence} {sentence}");
    let ask = |no_paste| copy_request(&thrice, 200, 400, no_paste);
    // No sources: only the reply's own repeats can be penalised.
    let steering = |own_repeats| {
        Some(rein_models::NoPaste {
            sources: Vec::new(),
            allowed_tokens: 4,
            own_repeats,
            tables: Vec::new(),
            table_run_words: 0,
        })
    };
    let uncounted = text_of(
        &model
            .complete(&ask(steering(false)), &mut |_| {})
            .unwrap()
            .text,
    );
    let words = sentence.split_whitespace().count();
    let free_run = longest_repeated_run(&uncounted);
    assert!(
        free_run >= words,
        "asked to copy, the model copies: {uncounted}"
    );
    let counted = text_of(
        &model
            .complete(&ask(steering(true)), &mut |_| {})
            .unwrap()
            .text,
    );
    let run = longest_repeated_run(&counted);
    assert!(
        run < words,
        "the sentence came out again whole with its own repeats counted ({run} words, \
         {free_run} unsteered): {counted}"
    );
}

/// Words as the judge's `not_copied` reads them: runs of letters and digits, lower case (a
/// CSV cell's comma parts two words).
fn judge_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[test]
fn real_model_no_paste_keeps_a_table_s_rows_apart() {
    if skip() {
        return;
    }
    let table = "task,owner,status,hours\nRenewal screen design,Priya,done,12\n\
        Renewal API,Jonas,done,16\nReservation screen,Priya,in progress,10\n\
        Catalogue search integration,Jonas,blocked,14\n";
    let mut model = start();
    let ask = |no_paste| copy_request(table, 200, 600, no_paste);
    let free = text_of(&model.complete(&ask(None), &mut |_| {}).unwrap().text);
    let free_run = longest_common_run(&judge_words(&free), &judge_words(table));
    assert!(
        free_run >= 12,
        "asked to copy, the model pastes rows one after another: {free}"
    );
    let steered = text_of(
        &model
            .complete(
                &ask(Some(rein_models::NoPaste {
                    sources: Vec::new(),
                    allowed_tokens: 4,
                    own_repeats: false,
                    tables: vec![table.to_string()],
                    table_run_words: 8,
                })),
                &mut |_| {},
            )
            .unwrap()
            .text,
    );
    // The longest row is six words: a longer run crosses a row end.
    let run = longest_common_run(&judge_words(&steered), &judge_words(table));
    assert!(
        run <= 6,
        "a run of {run} words ({free_run} unsteered) crossed a row end: {steered}"
    );
    // Each row still comes out, its hours as they are (a row copied alone is never bent).
    let words = judge_words(&steered);
    for hours in ["12", "16", "10", "14"] {
        assert!(
            words.iter().any(|w| w == hours),
            "the row with {hours} hours is missing or bent: {steered}"
        );
    }
}
