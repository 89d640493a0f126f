//! The OpenAI-compatible backend against the fake server on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_models::openai::{check_endpoint, list_models, remote_warning, ApiKey, StructuredOutput};
use rein_models::{
    ChatMessage, ChooseRequest, CompletionRequest, DecisionSource, FinishReason, Model, ModelError,
    OpenAiModel, OpenAiOptions, Prompt, SamplingProfile,
};
use rein_testkit::{FakeOpenAi, FakeReply};
use serde_json::json;

fn chat_request() -> CompletionRequest {
    let mut r = CompletionRequest::new(
        Prompt::chat(vec![
            ChatMessage::system("be brief"),
            ChatMessage::user("hello"),
        ]),
        128,
        SamplingProfile::ACTOR,
    );
    r.seed = 7;
    // Without a repeat penalty, so the only notices are the ones a test is about.
    r.sampling.repeat_penalty = 1.0;
    r
}

fn labels(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

#[test]
fn streams_deltas_in_order_and_sends_the_sampling_fields() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::stream(&["Hel", "lo", ", wor", "ld ✓"]));
    let mut m = OpenAiModel::new(&format!("{}/v1", server.url()), "qwen", false).unwrap();
    assert_eq!(m.identity().name, "fake-model");
    assert_eq!(m.identity().architecture, "remote");

    let mut pieces = Vec::new();
    let mut request = chat_request();
    request.sampling = SamplingProfile::ACTOR;
    let c = m
        .complete(&request, &mut |t| pieces.push(t.to_string()))
        .unwrap();
    assert_eq!(pieces, vec!["Hel", "lo", ", wor", "ld ✓"]);
    assert_eq!(c.text, "Hello, world ✓");
    assert_eq!(c.finish, FinishReason::Stop);
    assert_eq!((c.prompt_tokens, c.completion_tokens), (11, 4));

    let posts = server.posts();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].path, "/v1/chat/completions");
    let b = &posts[0].body;
    assert_eq!(b["model"], "qwen");
    assert_eq!(b["stream"], true);
    assert_eq!(b["max_tokens"], 128);
    assert_eq!(b["seed"], 7);
    assert_eq!(b["top_k"], 50);
    assert!((b["temperature"].as_f64().unwrap() - 0.1).abs() < 1e-6);
    // The profile's 1.1 is not sent: a server would apply it over the prompt too; a notice
    // says so once.
    assert_eq!(b["repeat_penalty"].as_f64(), Some(1.0));
    let notices = m.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("repeat penalty (1.1) is not sent"),
        "{notices:?}"
    );
    m.complete(&request, &mut |_| {}).ok();
    assert!(m.take_notices().is_empty());
    assert_eq!(
        b["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}])
    );
    assert!(b.get("response_format").is_none());
    assert!(b.get("stop").is_none());
}

#[test]
fn a_schema_becomes_response_format_and_stop_strings_cut() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::Stream {
        deltas: vec!["{\"a\":".into(), "1}".into()],
        finish: "length".into(),
    });
    server.push(FakeReply::stream(&["done. EN", "D and more"]));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]});
    let mut r = chat_request();
    r.json_schema = Some(schema.clone());
    let c = m.complete(&r, &mut |_| {}).unwrap();
    assert_eq!(c.text, "{\"a\":1}");
    assert_eq!(c.finish, FinishReason::Length);
    assert_eq!(server.response_formats().len(), 1);
    let sent = &server.posts()[0].body;
    assert_eq!(
        sent["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": true}})
    );

    let mut r = chat_request();
    r.stop = vec!["END".into()];
    let mut seen = String::new();
    let c = m.complete(&r, &mut |t| seen.push_str(t)).unwrap();
    assert_eq!(c.text, "done. ");
    assert_eq!(seen, "done. ");
    assert_eq!(c.finish, FinishReason::StopString);
    assert_eq!(server.posts()[1].body["stop"], json!(["END"]));
}

#[test]
fn raw_prompts_use_the_completions_endpoint() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::stream(&["a", "b"]));
    server.set_logprob_tree(&[
        ("Q: x\nA:", &[(" yes", -0.2), ("no", -1.8)]),
        ("Q: x\nA: yes", &[("", 0.0)]),
        ("Q: x\nA:no", &[("\n", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "gemma", false).unwrap();
    let r = CompletionRequest::new(Prompt::raw("Q: x\nA:"), 8, SamplingProfile::JUDGE);
    assert_eq!(m.complete(&r, &mut |_| {}).unwrap().text, "ab");
    let reply = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("Q: x\nA:"),
            labels: labels(&["yes", "no"]),
        })
        .unwrap();
    let posts = server.posts();
    assert_eq!(posts[0].path, "/v1/completions");
    assert_eq!(posts[0].body["prompt"], "Q: x\nA:");
    assert_eq!(posts[1].path, "/v1/completions");
    assert_eq!(posts[1].body["logprobs"], 20);
    // The likeliest label is continued first: its text is appended to the raw prompt.
    assert_eq!(posts[2].body["prompt"], "Q: x\nA: yes");
    assert_eq!(posts.len(), 4);
    let sum: f64 = reply.probabilities.iter().map(|p| p.probability).sum();
    assert!((sum - 1.0).abs() < 1e-9);
    let mass = (-0.2f64).exp() + (-1.8f64).exp();
    assert!((reply.label_mass.unwrap() - mass).abs() < 1e-9, "{reply:?}");
    assert_eq!(reply.best().unwrap().0, "yes");
}

#[test]
fn choose_from_logprobs_sums_case_and_space_variants_and_reports_mass() {
    let server = FakeOpenAi::start().unwrap();
    let p = |x: f64| x.ln();
    server.set_logprob_tree(&[
        (
            "",
            &[
                ("Summ", p(0.4)),
                (" summarize", p(0.2)),
                (" Read", p(0.1)),
                ("READ", p(0.1)),
                ("re", p(0.1)),
                ("The", p(0.05)),
            ],
        ),
        ("Summ", &[("arize", p(0.9)), ("ary", p(0.1))]),
        ("Summarize", &[("", 0.0)]),
        (" summarize", &[(":", 0.0)]),
        (" Read", &[("\n", 0.0)]),
        ("READ", &[("ING", 0.0)]),
        // "re" begins read and report: the next token says which.
        ("re", &[("port", p(0.5)), ("ad", p(0.5))]),
        ("report", &[("", 0.0)]),
        ("read", &[(" ", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let req = ChooseRequest {
        prompt: Prompt::chat(vec![ChatMessage::user("Summarize docs/q3.md")]),
        labels: labels(&["summarize", "read", "report", "write"]),
    };
    let r = m.choose(&req).unwrap();
    assert_eq!(r.source, DecisionSource::Logprobs);
    let got: Vec<f64> = r.probabilities.iter().map(|p| p.probability).collect();
    assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{got:?}");
    // summarize 0.36 + 0.2 ("Summary" is not the label); read 0.1 + 0.05 (" Read", then "re"
    // "ad"; "READING" is another word); report 0.05; write 0.
    let mass = 0.56 + 0.15 + 0.05;
    assert!((r.label_mass.unwrap() - mass).abs() < 1e-9, "{r:?}");
    assert!((got[0] - 0.56 / mass).abs() < 1e-9, "{got:?}");
    assert!((got[1] - 0.15 / mass).abs() < 1e-9, "{got:?}");
    assert!((got[2] - 0.05 / mass).abs() < 1e-9, "{got:?}");
    assert_eq!(got[3], 0.0);
    assert_eq!(r.best().unwrap().0, "summarize");

    let posts = server.posts();
    let b = &posts[0].body;
    assert_eq!(b["max_tokens"], 1);
    assert_eq!(b["logprobs"], true);
    assert_eq!(b["top_logprobs"], 20);
    assert_eq!(b["stream"], false);
    assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    // A continuation is the same request with the reply's start as a final assistant message.
    let next = posts[1].body["messages"].as_array().unwrap();
    assert_eq!(next.len(), 2);
    assert_eq!(next[1], json!({"role": "assistant", "content": "Summ"}));
}

#[test]
fn a_prefix_label_does_not_take_the_longer_labels_mass() {
    // The model starts "edit", which begins both edit and edit_file; the next token decides.
    let server = FakeOpenAi::start().unwrap();
    let p = |x: f64| x.ln();
    server.set_logprob_tree(&[
        ("Tool:", &[("edit", p(0.9)), (" read", p(0.1))]),
        ("Tool:edit", &[("_file", p(0.8)), ("\n", p(0.2))]),
        ("Tool:edit_file", &[("", 0.0)]),
        ("Tool: read", &[(".", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let req = ChooseRequest {
        prompt: Prompt::raw("Tool:"),
        labels: labels(&["edit", "edit_file", "read"]),
    };
    let r = m.choose(&req).unwrap();
    assert_eq!(r.best().unwrap().0, "edit_file");
    let got: Vec<f64> = r.probabilities.iter().map(|p| p.probability).collect();
    assert!((got[0] - 0.18).abs() < 1e-9, "{got:?}");
    assert!((got[1] - 0.72).abs() < 1e-9, "{got:?}");
    assert!((r.label_mass.unwrap() - 1.0).abs() < 1e-9);
}

#[test]
fn an_endpoint_that_does_not_continue_the_reply_fails_closed() {
    // Asked to continue "Yes", it starts a new reply: the bare prompt's tokens come back.
    let server = FakeOpenAi::start().unwrap();
    let tops: &[(&str, f64)] = &[("Yes", (0.9f64).ln()), ("No", (0.1f64).ln())];
    server.set_logprob_tree(&[("", tops), ("Yes", tops), ("No", tops)]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let e = m
        .choose(&ChooseRequest {
            prompt: Prompt::chat(vec![ChatMessage::user("Q?")]),
            labels: labels(&["yes", "no"]),
        })
        .unwrap_err();
    assert!(matches!(e, ModelError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("does not continue"), "{e}");
}

#[test]
fn low_label_mass_is_an_outage_not_a_confident_answer() {
    let server = FakeOpenAi::start().unwrap();
    // Normalised over the labels "yes" would be 0.99, yet the labels held 0.101 of the mass.
    server.set_logprob_tree(&[
        (
            "Q?",
            &[
                ("I", (0.6f64).ln()),
                ("Sure", (0.29f64).ln()),
                ("yes", (0.1f64).ln()),
                ("no", (0.001f64).ln()),
            ],
        ),
        ("Q?yes", &[("", 0.0)]),
        ("Q?no", &[("", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let e = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("Q?"),
            labels: labels(&["yes", "no"]),
        })
        .unwrap_err();
    assert!(matches!(e, ModelError::LowLabelMass { .. }), "{e}");
    assert_eq!(e.exit_code(), 3);
    assert!(!e.is_retryable());
    assert!(e.to_string().contains("outage"), "{e}");
    assert!(e.to_string().contains("0.101"), "{e}");
}

#[test]
fn labels_that_differ_only_by_case_are_refused() {
    let server = FakeOpenAi::start().unwrap();
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let e = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("Q?"),
            labels: labels(&["yes", "Yes"]),
        })
        .unwrap_err();
    assert!(matches!(e, ModelError::BadRequest(_)), "{e}");
    assert!(server.posts().is_empty());
}

#[test]
fn choose_without_logprobs_is_unsupported_not_a_fallback() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::NoLogprobs {
        text: "summarize".into(),
    });
    server.push(FakeReply::logprobs(&[("xyz", -0.2), ("abc", -2.0)]));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let req = ChooseRequest {
        prompt: Prompt::raw("?"),
        labels: labels(&["summarize", "read"]),
    };
    let e = m.choose(&req).unwrap_err();
    assert!(matches!(e, ModelError::Unsupported(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "this endpoint does not return logprobs, so choose is not supported by it; use an embedded model for decisions"
    );
    let e = m.choose(&req).unwrap_err();
    assert!(
        matches!(e, ModelError::LowLabelMass { mass, .. } if mass == 0.0),
        "{e}"
    );
    let e = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("?"),
            labels: vec![],
        })
        .unwrap_err();
    assert!(matches!(e, ModelError::BadRequest(_)));
}

#[test]
fn http_errors_carry_the_servers_message() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::error(500, "model failed to load: out of memory"));
    server.push(FakeReply::error(400, "response_format is not supported"));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let e = m.complete(&chat_request(), &mut |_| {}).unwrap_err();
    assert!(matches!(e, ModelError::Endpoint(_)), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("HTTP 500"), "{msg}");
    assert!(msg.contains("model failed to load: out of memory"), "{msg}");
    assert_eq!(e.exit_code(), 3);
    let e = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("?"),
            labels: labels(&["a"]),
        })
        .unwrap_err();
    assert!(
        e.to_string().contains("HTTP 400")
            && e.to_string().contains("response_format is not supported"),
        "{e}"
    );
}

#[test]
fn a_stream_cut_short_is_an_error() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::BrokenStream {
        deltas: vec!["partial".into()],
    });
    server.push(FakeReply::Raw {
        status: 200,
        content_type: "text/event-stream".into(),
        body: "data: {not json\n\n".into(),
    });
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let mut seen = String::new();
    let e = m
        .complete(&chat_request(), &mut |t| seen.push_str(t))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("closed the stream before the reply finished"),
        "{e}"
    );
    assert_eq!(seen, "partial");
    let e = m.complete(&chat_request(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("not JSON"), "{e}");
}

#[test]
fn identity_falls_back_to_the_spec_model() {
    let server = FakeOpenAi::start().unwrap();
    server.set_models(None);
    let m = OpenAiModel::new(&server.url(), "my-model", false).unwrap();
    assert_eq!(m.identity().name, "my-model");
    assert_eq!(
        m.identity().spec,
        format!("openai:{}#my-model", server.url())
    );
    server.set_models(Some(vec!["a".into(), "my-model".into()]));
    assert_eq!(
        OpenAiModel::new(&server.url(), "my-model", false)
            .unwrap()
            .identity()
            .name,
        "my-model"
    );
    server.set_models(Some(vec!["/models/qwen.gguf".into()]));
    assert_eq!(
        OpenAiModel::new(&server.url(), "x", false)
            .unwrap()
            .identity()
            .name,
        "/models/qwen.gguf"
    );
}

#[test]
fn an_unreachable_loopback_server_is_a_clear_error() {
    // Bind then drop, so the port is (almost certainly) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = OpenAiModel::new(&format!("http://127.0.0.1:{port}"), "m", false).unwrap_err();
    assert!(matches!(e, ModelError::Endpoint(_)), "{e}");
    assert!(e.to_string().contains("cannot reach"), "{e}");
}

#[test]
fn non_loopback_hosts_need_the_opt_in() {
    // Refused before any connection is attempted (.invalid never resolves anyway).
    for url in ["http://example.invalid:8080", "http://10.1.2.3:8080/v1"] {
        let e = OpenAiModel::new(url, "m", false).unwrap_err();
        assert!(matches!(e, ModelError::Refused(_)), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("--allow-remote") && msg.contains("REIN_ALLOW_REMOTE=1"),
            "{msg}"
        );
        assert_eq!(e.exit_code(), 2);
        // With the opt-in the check passes (nothing is contacted here).
        let ok = check_endpoint(url, true).unwrap();
        assert!(!ok.loopback);
    }
    assert!(check_endpoint("http://[::1]:9", false).unwrap().loopback);
    let e = OpenAiModel::with_options(OpenAiOptions::new("http://127.0.0.1:9", " ", false))
        .unwrap_err();
    assert!(matches!(e, ModelError::BadRequest(_)));
}

#[test]
fn a_slow_server_times_out() {
    // A listener that accepts but never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let mut opts = OpenAiOptions::new(url, "m", false);
    opts.read_timeout = std::time::Duration::from_millis(300);
    let e = OpenAiModel::with_options(opts).unwrap_err();
    assert!(matches!(e, ModelError::Timeout { .. }), "{e}");
    drop(listener);
}

// --- https, API keys, structured output (issue 10 items 7 and 11) ---

const KEY: &str = "sk-rein-test-5b1f0c";

fn tls_options(server: &FakeOpenAi, key: Option<&str>) -> OpenAiOptions {
    let mut o = OpenAiOptions::new(server.url(), "qwen", false);
    o.extra_roots_pem = Some(server.root_pem().unwrap().as_bytes().to_vec());
    o.api_key = key.and_then(ApiKey::new);
    o
}

#[test]
fn https_with_an_api_key_against_the_tls_fake_server() {
    let server = FakeOpenAi::start_tls().unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    server.require_key(KEY);
    server.push(FakeReply::stream(&["over ", "tls"]));
    let mut m = OpenAiModel::with_options(tls_options(&server, Some(KEY))).unwrap();
    assert!(m.endpoint().https);
    let c = m.complete(&chat_request(), &mut |_| {}).unwrap();
    assert_eq!(c.text, "over tls");
    for r in server.requests() {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    // The key is in no printable form of the model.
    assert!(!format!("{m:?}").contains(KEY));
    assert!(!format!("{:?}", m.identity()).contains(KEY));
    // A loopback endpoint has nothing to warn about.
    assert!(m.take_notices().is_empty());
}

#[test]
fn a_missing_or_wrong_key_names_the_variable_to_set() {
    let server = FakeOpenAi::start_tls().unwrap();
    server.require_key(KEY);
    let e = OpenAiModel::with_options(tls_options(&server, None)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("HTTP 401"), "{text}");
    assert!(text.contains("set REIN_API_KEY_127_0_0_1"), "{text}");
    let e = OpenAiModel::with_options(tls_options(&server, Some("sk-wrong"))).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("refused the key in REIN_API_KEY_127_0_0_1"),
        "{text}"
    );
    assert!(!text.contains("sk-wrong"), "{text}");
}

#[test]
fn an_untrusted_certificate_is_refused_not_ignored() {
    let server = FakeOpenAi::start_tls().unwrap();
    let mut o = tls_options(&server, None);
    o.extra_roots_pem = None;
    let e = OpenAiModel::with_options(o).unwrap_err();
    assert!(matches!(e, ModelError::Endpoint(_)), "{e}");
    assert!(e.to_string().contains("REIN_CA_FILE"), "{e}");
    // Another server's root does not vouch for this one.
    let other = FakeOpenAi::start_tls().unwrap();
    let mut o = tls_options(&server, None);
    o.extra_roots_pem = Some(other.root_pem().unwrap().as_bytes().to_vec());
    assert!(OpenAiModel::with_options(o).is_err());
    assert!(
        server.requests().is_empty(),
        "no request got through the failed handshakes"
    );
    // Roots that are not PEM certificates are a clear error.
    let mut o = tls_options(&server, None);
    o.extra_roots_pem = Some(b"not a certificate".to_vec());
    let e = OpenAiModel::with_options(o).unwrap_err();
    assert!(e.to_string().contains("hold no certificate"), "{e}");
}

#[test]
fn a_key_is_never_sent_in_clear_text_to_another_machine() {
    // Refused before any connection is made (no network in this test).
    let mut o = OpenAiOptions::new("http://10.11.12.13:8080", "qwen", true);
    o.api_key = ApiKey::new(KEY);
    let e = OpenAiModel::with_options(o).unwrap_err();
    assert!(matches!(e, ModelError::Refused(_)), "{e}");
    assert!(e.to_string().contains("https://"), "{e}");
    assert!(!e.to_string().contains(KEY), "{e}");
}

#[test]
fn a_non_loopback_endpoint_is_announced_and_loopback_is_not() {
    let w = remote_warning(&check_endpoint("https://10.11.12.13", true).unwrap()).unwrap();
    assert!(
        w.contains("10.11.12.13") && w.contains("not this machine"),
        "{w}"
    );
    assert!(!w.contains("clear text"), "{w}");
    let w = remote_warning(&check_endpoint("http://gpu.example.invalid", true).unwrap()).unwrap();
    assert!(w.contains("clear text"), "{w}");
    assert!(remote_warning(&check_endpoint("http://127.0.0.1:1", false).unwrap()).is_none());
}

#[test]
fn list_models_shows_what_the_endpoint_serves() {
    let server = FakeOpenAi::start_tls().unwrap();
    server.require_key(KEY);
    server.set_models(Some(vec!["qwen-a".into(), "qwen-b".into()]));
    let models = list_models(&tls_options(&server, Some(KEY))).unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, vec!["qwen-a", "qwen-b"]);
    assert_eq!(models[0].owned_by.as_deref(), Some("fake"));
    server.set_models(None);
    let e = list_models(&tls_options(&server, Some(KEY))).unwrap_err();
    assert!(e.to_string().contains("does not list its models"), "{e}");
}

fn schema_request() -> CompletionRequest {
    let mut r = chat_request();
    r.json_schema = Some(json!({"type": "object", "required": ["action"]}));
    r
}

#[test]
fn an_endpoint_that_takes_the_schema_gets_it_every_time_and_it_is_recorded() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::stream(&["{\"action\":\"a\"}"]));
    server.push(FakeReply::stream(&["{\"action\":\"b\"}"]));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    assert_eq!(m.structured_output(), StructuredOutput::Unknown);
    m.complete(&schema_request(), &mut |_| {}).unwrap();
    assert_eq!(m.structured_output(), StructuredOutput::JsonSchema);
    let notices = m.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("accepted"), "{notices:?}");
    m.complete(&schema_request(), &mut |_| {}).unwrap();
    assert!(m.take_notices().is_empty(), "detected once");
    assert_eq!(server.response_formats().len(), 2);
}

#[test]
fn an_endpoint_that_refuses_the_schema_falls_back_to_repair_and_says_so() {
    for status in [400, 422] {
        let server = FakeOpenAi::start().unwrap();
        server.refuse_response_format(status);
        server.push(FakeReply::stream(&["{'action': 'a'}"]));
        server.push(FakeReply::stream(&["{'action': 'b'}"]));
        let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
        let c = m.complete(&schema_request(), &mut |_| {}).unwrap();
        assert_eq!(c.text, "{'action': 'a'}");
        assert_eq!(m.structured_output(), StructuredOutput::Refused);
        let notices = m.take_notices();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains("refused") && notices[0].contains(&format!("HTTP {status}")),
            "{notices:?}"
        );
        assert!(notices[0].contains("repair"), "{notices:?}");
        // The refused request, its retry without the schema, then the next without asking.
        m.complete(&schema_request(), &mut |_| {}).unwrap();
        let posts = server.posts();
        assert_eq!(posts.len(), 3);
        assert!(posts[0].body.get("response_format").is_some());
        assert!(posts[1].body.get("response_format").is_none());
        assert!(posts[2].body.get("response_format").is_none());
        assert!(m.take_notices().is_empty());
    }
}

#[test]
fn a_400_that_is_not_about_the_schema_is_not_taken_for_a_refusal() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::error(400, "the prompt is too long"));
    server.push(FakeReply::error(400, "the prompt is too long"));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let e = m.complete(&schema_request(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("too long"), "{e}");
    assert_eq!(m.structured_output(), StructuredOutput::Unknown);
    assert!(m.take_notices().is_empty());
}

#[test]
fn an_endpoint_that_takes_the_schema_but_ignores_it_is_found_out() {
    // A liar: accepts `response_format` (a server that drops unknown fields does) and answers in
    // prose. Accepting the field proves nothing; the first finished reply that is not JSON does.
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::stream(&[
        "Sure! I will read ",
        "the file first.",
    ]));
    server.push(FakeReply::stream(&["{'action': 'b'}"]));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let c = m.complete(&schema_request(), &mut |_| {}).unwrap();
    assert_eq!(c.text, "Sure! I will read the file first.");
    assert_eq!(m.structured_output(), StructuredOutput::Ignored);
    let notices = m.take_notices();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices[0].contains("accepted"), "{notices:?}");
    assert!(
        notices[1].contains("did not follow it") && notices[1].contains("repair"),
        "{notices:?}"
    );
    assert!(
        !notices[1].contains("Sure!"),
        "model text stays out of notices"
    );
    m.complete(&schema_request(), &mut |_| {}).unwrap();
    let posts = server.posts();
    assert!(posts[0].body.get("response_format").is_some());
    assert!(
        posts[1].body.get("response_format").is_none(),
        "an ignored schema is not sent again"
    );
    assert!(m.take_notices().is_empty(), "said once");
}

#[test]
fn a_reply_cut_by_the_token_cap_does_not_count_against_the_schema() {
    // JSON cut off by max_tokens is not JSON, but the server may well have followed the schema.
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::Stream {
        deltas: vec!["{\"action\": \"read_fi".into()],
        finish: "length".into(),
    });
    server.push(FakeReply::stream(&["{\"action\":\"b\"}"]));
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    m.complete(&schema_request(), &mut |_| {}).unwrap();
    assert_eq!(m.structured_output(), StructuredOutput::JsonSchema);
    m.complete(&schema_request(), &mut |_| {}).unwrap();
    assert_eq!(m.structured_output(), StructuredOutput::JsonSchema);
    assert_eq!(server.response_formats().len(), 2);
}
