//! Chat prompts rendered with the Jinja template the GGUF itself carries
//! (`tokenizer.chat_template`), the way Hugging Face `apply_chat_template` renders it, instead of
//! llama.cpp's built-in pattern matcher (which recognises a template family and re-implements
//! it: for Qwen it drops the default system prompt and has no `tool` role).
//!
//! The environment gives templates what HF templates expect: `messages`, `tools` (none),
//! `add_generation_prompt`, `bos_token`, `eos_token`, `raise_exception(message)`, the `tojson`
//! filter and Python's string methods (`.strip()`, `.startswith()`, ...). Blocks are trimmed as
//! HF trims them (`trim_blocks`, `lstrip_blocks`).

use minijinja::{context, Environment, Error, ErrorKind, Value};
use rein_protocol::{ChatMessage, Role};

use crate::error::{LlamaError, Result};

const NAME: &str = "chat_template";

/// A model's own chat template, compiled once.
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").finish_non_exhaustive()
    }
}

fn raise_exception(message: String) -> std::result::Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// The role name templates expect.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

impl ChatTemplate {
    /// Compiles `source`; a template that does not parse is refused here, not at first use.
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<ChatTemplate> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned(NAME, source.to_string())
            .map_err(|e| {
                LlamaError::Template(format!(
                    "the model's chat template does not parse ({e}); run with `--lever gguf-template=off` to render prompts with llama.cpp's built-in template instead"
                ))
            })?;
        Ok(ChatTemplate {
            env,
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
        })
    }

    /// Renders `messages` (contents as given: defusing control tokens is the caller's job),
    /// ending with the opening of the assistant's turn when `add_generation_prompt`.
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String> {
        let messages: Vec<Value> = messages
            .iter()
            .map(|m| {
                context! {
                    role => role_name(m.role),
                    content => m.content.as_str(),
                }
            })
            .collect();
        let template = self
            .env
            .get_template(NAME)
            .map_err(|e| LlamaError::Template(e.to_string()))?;
        template
            .render(context! {
                messages => messages,
                tools => Value::from(()),
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos_token.as_str(),
                eos_token => self.eos_token.as_str(),
            })
            .map_err(|e| LlamaError::Template(format!("the model's chat template failed: {e}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hf_pieces_work() {
        let t = ChatTemplate::new(
            "{{ bos_token }}{% for m in messages %}{{ m.content.strip() | tojson }}{% endfor %}\
             {% if add_generation_prompt %}>{% endif %}{% if tools %}T{% endif %}",
            "<s>",
            "</s>",
        )
        .unwrap();
        let out = t
            .render(&[ChatMessage::user("  hi \"x\"  ")], true)
            .unwrap();
        assert_eq!(out, "<s>\"hi \\\"x\\\"\">");
        assert_eq!(t.render(&[], false).unwrap(), "<s>");
    }

    #[test]
    fn raise_exception_and_bad_templates_are_errors() {
        let t = ChatTemplate::new(
            "{% if messages[0].role != 'system' %}{{ raise_exception('system first') }}{% endif %}",
            "",
            "",
        )
        .unwrap();
        let e = t.render(&[ChatMessage::user("x")], true).unwrap_err();
        assert!(e.to_string().contains("system first"), "{e}");
        let e = ChatTemplate::new("{% for %}", "", "").unwrap_err();
        assert!(e.to_string().contains("does not parse"), "{e}");
    }
}
