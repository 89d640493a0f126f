//! The chat template of each catalog model, rendered by Rein's Jinja renderer (lever
//! `gguf-template`), against golden strings written by hand from the template text. The
//! templates are kept in `models/templates/<name>.jinja`, copied from the GGUFs; when a model
//! file is present, the copy is checked against the file's `tokenizer.chat_template`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rein_llama::template::ChatTemplate;
use rein_models::{Catalog, ChatMessage, DataDir};
use rein_protocol::gguf::GgufHeader;
use rein_protocol::Role;

const QWEN_DEFAULT_SYSTEM: &str =
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n";

fn templates_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/templates")
}

fn template_for(name: &str) -> Option<String> {
    std::fs::read_to_string(templates_dir().join(format!("{name}.jinja"))).ok()
}

fn qwen_goldens(template: &ChatTemplate) {
    let sys = ChatMessage::system("You edit files.");
    let user = ChatMessage::user("Add a line.");
    // System first: the system message replaces the default.
    assert_eq!(
        template.render(&[sys.clone(), user.clone()], true).unwrap(),
        "<|im_start|>system\nYou edit files.<|im_end|>\n<|im_start|>user\nAdd a line.<|im_end|>\n<|im_start|>assistant\n"
    );
    // No system message: Qwen's default system prompt (llama.cpp's matcher drops it).
    assert_eq!(
        template.render(std::slice::from_ref(&user), true).unwrap(),
        format!(
            "{QWEN_DEFAULT_SYSTEM}<|im_start|>user\nAdd a line.<|im_end|>\n<|im_start|>assistant\n"
        )
    );
    // Without the generation prompt the assistant's turn is not opened.
    assert_eq!(
        template.render(std::slice::from_ref(&user), false).unwrap(),
        format!("{QWEN_DEFAULT_SYSTEM}<|im_start|>user\nAdd a line.<|im_end|>\n")
    );
    // Tool messages become tool responses inside one user turn; a later system message is a
    // turn of its own.
    let conversation = [
        sys.clone(),
        user.clone(),
        ChatMessage::assistant("{\"tool\":\"read\"}"),
        ChatMessage::new(Role::Tool, "line 1"),
        ChatMessage::new(Role::Tool, "line 2"),
        ChatMessage::system("Be brief."),
        ChatMessage::user("Go on."),
    ];
    assert_eq!(
        template.render(&conversation, true).unwrap(),
        "<|im_start|>system\nYou edit files.<|im_end|>\n\
         <|im_start|>user\nAdd a line.<|im_end|>\n\
         <|im_start|>assistant\n{\"tool\":\"read\"}<|im_end|>\n\
         <|im_start|>user\n<tool_response>\nline 1\n</tool_response>\n<tool_response>\nline 2\n</tool_response><|im_end|>\n\
         <|im_start|>system\nBe brief.<|im_end|>\n\
         <|im_start|>user\nGo on.<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    // The prompt of each step is a prefix of the next step's (the KV cache reuses it).
    for k in [2, 3] {
        let shorter = template.render(&conversation[..k], true).unwrap();
        let longer = template.render(&conversation[..k + 1], true).unwrap();
        if conversation[k].role == Role::Assistant {
            assert!(longer.starts_with(&shorter), "step {k}");
        }
    }
    let step1 = template.render(&conversation[..2], true).unwrap();
    let step2 = template.render(&conversation[..4], true).unwrap();
    assert!(step2.starts_with(&step1));
}

#[test]
fn each_catalog_models_template_renders_the_golden_text() {
    let catalog = Catalog::builtin().unwrap();
    let mut rendered = 0;
    for entry in &catalog.models {
        let template = template_for(&entry.name);
        if !entry.chat_template {
            assert!(
                template.is_none(),
                "{} has no chat template in the catalog but a template file",
                entry.name
            );
            continue;
        }
        let source =
            template.unwrap_or_else(|| panic!("models/templates/{}.jinja is missing", entry.name));
        let template = ChatTemplate::new(&source, "", "<|im_end|>").unwrap();
        match entry.architecture.as_str() {
            "qwen2" => qwen_goldens(&template),
            other => panic!(
                "no golden strings for architecture {other} ({})",
                entry.name
            ),
        }
        rendered += 1;
    }
    assert_eq!(rendered, 2, "the two Qwen models carry templates");
}

/// Reads only the header of the pulled files (no model is loaded); skips a model not pulled.
#[test]
fn the_template_copies_match_the_pulled_ggufs() {
    let catalog = Catalog::builtin().unwrap();
    let dir = DataDir::from_env().unwrap();
    for entry in &catalog.models {
        let path = dir.model_path(entry);
        if !path.is_file() {
            eprintln!("skipped {}: not pulled", entry.name);
            continue;
        }
        let header = GgufHeader::read_file(&path).unwrap();
        // A model the catalog says has no template (gemma3-270m, a base model) must have none in
        // its file either, or its prompts would be rendered without the template it ships.
        let expected = if entry.chat_template {
            template_for(&entry.name)
        } else {
            None
        };
        assert_eq!(
            header.chat_template(),
            expected.as_deref(),
            "{}",
            entry.name
        );
        assert_eq!(header.name(), entry.gguf_name);
        assert_eq!(header.parameter_count, entry.parameters);
        assert_eq!(header.tensor_count, entry.tensors);
    }
}
