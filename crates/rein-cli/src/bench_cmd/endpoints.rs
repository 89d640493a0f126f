//! `--models`: which models a bench compares, and which endpoint each worker opens.
//!
//! Entries `openai:URL#M` that name the same model `M` at different URLs are one model served by
//! several endpoints (llama-server or vLLM replicas): the results name it `openai:*#M`, and
//! worker w opens endpoint (w + shard offset) mod E, so `--jobs` workers spread round-robin over
//! them and the shards of a bench do not all start on the first one.

use anyhow::bail;
use rein_models::ModelSpec;

/// One model of the bench and the endpoints (or the single spec) that serve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ModelGroup {
    /// The name in the results.
    pub name: String,
    /// What `open_model` opens; several only for an `openai:` model on several endpoints.
    pub specs: Vec<String>,
}

impl ModelGroup {
    /// The spec worker `worker` opens.
    pub fn spec_for(&self, worker: usize, offset: usize) -> &str {
        &self.specs[(worker + offset) % self.specs.len()]
    }
}

/// Groups `--models` entries, in the order given (a group sits where its first entry was).
pub(super) fn group_models(entries: &[String]) -> anyhow::Result<Vec<ModelGroup>> {
    let mut groups: Vec<(Option<String>, ModelGroup)> = Vec::new();
    for entry in entries {
        if groups.iter().any(|(_, g)| g.specs.contains(entry)) {
            bail!("--models names {entry} twice: give each model or endpoint once");
        }
        let id = match ModelSpec::parse(entry)? {
            ModelSpec::OpenAi { model, .. } => Some(model),
            _ => None,
        };
        match groups
            .iter_mut()
            .find(|(gid, _)| id.is_some() && *gid == id)
        {
            Some((_, g)) => g.specs.push(entry.clone()),
            None => groups.push((
                id,
                ModelGroup {
                    name: entry.clone(),
                    specs: vec![entry.clone()],
                },
            )),
        }
    }
    Ok(groups
        .into_iter()
        .map(|(id, mut g)| {
            if let (Some(id), true) = (id, g.specs.len() > 1) {
                g.name = format!("openai:*#{id}");
            }
            g
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_same_model_at_several_urls_is_one_model_spread_round_robin() {
        let g = group_models(&s(&[
            "openai:http://127.0.0.1:8001#qwen",
            "scripted:a.jsonl",
            "openai:http://127.0.0.1:8002#qwen",
            "openai:http://127.0.0.1:8003#llama",
            "openai:http://127.0.0.1:8003#qwen",
        ]))
        .unwrap();
        let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "openai:*#qwen",
                "scripted:a.jsonl",
                "openai:http://127.0.0.1:8003#llama"
            ]
        );
        let qwen = &g[0];
        assert_eq!(qwen.specs.len(), 3);
        let opened: Vec<&str> = (0..4).map(|w| qwen.spec_for(w, 0)).collect();
        assert_eq!(
            opened,
            [
                "openai:http://127.0.0.1:8001#qwen",
                "openai:http://127.0.0.1:8002#qwen",
                "openai:http://127.0.0.1:8003#qwen",
                "openai:http://127.0.0.1:8001#qwen"
            ]
        );
        // Shard 2's worker 0 starts one endpoint further on.
        assert_eq!(qwen.spec_for(0, 1), "openai:http://127.0.0.1:8002#qwen");
        assert_eq!(g[1].spec_for(5, 3), "scripted:a.jsonl");
    }

    #[test]
    fn an_entry_given_twice_or_malformed_is_refused() {
        let twice = group_models(&s(&["scripted:a", "scripted:a"])).unwrap_err();
        assert!(twice.to_string().contains("twice"), "{twice}");
        assert!(group_models(&s(&["openai:#qwen"])).is_err());
    }
}
