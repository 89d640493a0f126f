#![allow(clippy::unwrap_used, clippy::expect_used)]
//! BFCL scoring on the package's own questions and answers (a sample vendored in
//! tests/data/bfcl, see its LICENSE-NOTE.md): every ground truth must pass, and each way of
//! being wrong that BFCL's rules name must fail.

use std::path::{Path, PathBuf};

use rein_bench::bfcl::check::{check, standardize, Call, Category};
use rein_bench::bfcl::data::{load, sample, Question};
use rein_bench::bfcl::names::{valid_tool_name, DECLINE};
use rein_bench::bfcl::prompt::{action_schema, messages, name_map, to_json_schema};
use rein_bench::bfcl::score::{score, summarise, BfclResult, Decoding};
use rein_engine::agent::read_reply;
use serde_json::{json, Map, Value};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bfcl")
}

fn question(category: Category, id: &str) -> Question {
    load(&data(), category)
        .unwrap()
        .into_iter()
        .find(|q| q.id == id)
        .unwrap_or_else(|| panic!("{id} not in the sample"))
}

fn call(name: &str, args: Value) -> Call {
    Call {
        name: name.to_string(),
        arguments: args.as_object().cloned().unwrap_or_default(),
    }
}

/// The ground truth's first answer for every parameter that has a non-optional one.
fn gold_call(q: &Question) -> Call {
    let entry = q.ground_truth[0].as_object().unwrap();
    let (name, params) = entry.iter().next().unwrap();
    let mut arguments = Map::new();
    for (p, answers) in params.as_object().unwrap() {
        if let Some(a) = first_answer(answers) {
            arguments.insert(p.clone(), a);
        }
    }
    Call {
        name: name.clone(),
        arguments,
    }
}

/// The first answer that is not `""`; inside a dict answer (and a list of them) every key's
/// answers are lists again, so they are resolved the same way.
fn first_answer(answers: &Value) -> Option<Value> {
    let a = answers
        .as_array()?
        .iter()
        .find(|a| a.as_str() != Some(""))?;
    Some(resolve(a))
}

fn resolve(a: &Value) -> Value {
    match a {
        Value::Object(d) => Value::Object(
            d.iter()
                .filter_map(|(k, v)| first_answer(v).map(|v| (k.clone(), v)))
                .collect(),
        ),
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            Value::Array(items.iter().map(resolve).collect())
        }
        other => other.clone(),
    }
}

fn verdict(q: &Question, calls: &[Call]) -> Result<(), String> {
    check(q.category, &q.functions, calls, &q.ground_truth).map_err(|m| m.error_type)
}

fn assert_fails(q: &Question, c: Call, error_type: &str) {
    assert_eq!(
        verdict(q, std::slice::from_ref(&c)),
        Err(error_type.to_string()),
        "{}: {:?}",
        q.id,
        c.arguments
    );
}

fn assert_passes(q: &Question, c: Call) {
    assert_eq!(
        verdict(q, std::slice::from_ref(&c)),
        Ok(()),
        "{}: {:?}",
        q.id,
        c.arguments
    );
}

#[test]
fn every_ground_truth_of_the_sample_passes() {
    for category in [Category::Simple, Category::Multiple] {
        let qs = load(&data(), category).unwrap();
        assert!(qs.len() >= 6, "{category:?}: {}", qs.len());
        for q in &qs {
            assert_eq!(verdict(q, &[gold_call(q)]), Ok(()), "{}", q.id);
        }
    }
}

/// The whole data set, when fetched (`rein bench fetch bfcl`, then
/// `REIN_BFCL_DATA=<data dir>/bench/bfcl/<release> cargo test -- --ignored`).
#[test]
#[ignore = "needs the fetched bfcl-eval data in REIN_BFCL_DATA"]
fn every_ground_truth_of_the_full_data_passes() {
    let dir = PathBuf::from(std::env::var("REIN_BFCL_DATA").expect("set REIN_BFCL_DATA"));
    for category in [Category::Simple, Category::Multiple] {
        let qs = load(&dir, category).unwrap();
        assert!(qs.len() >= 100);
        let failed: Vec<String> = qs
            .iter()
            .filter_map(|q| {
                verdict(q, &[gold_call(q)])
                    .err()
                    .map(|e| format!("{}: {e}", q.id))
            })
            .collect();
        assert!(failed.is_empty(), "{failed:#?}");
        for q in &qs {
            let gold = gold_call(q);
            let mut extra = gold.clone();
            extra.arguments.insert("zz_not_a_param".into(), json!(1));
            assert!(verdict(q, &[extra]).is_err(), "{}", q.id);
            let mut renamed = gold.clone();
            renamed.name.push('x');
            assert!(verdict(q, &[renamed]).is_err(), "{}", q.id);
            assert!(verdict(q, &[]).is_err(), "{}", q.id);
        }
    }
}

#[test]
fn names_counts_and_unknown_parameters() {
    let q = question(Category::Simple, "simple_python_0");
    assert_passes(
        &q,
        call("calculate_triangle_area", json!({"base": 10, "height": 5})),
    );
    assert_passes(
        &q,
        call(
            "calculate_triangle_area",
            json!({"base": 10, "height": 5, "unit": "Units"}),
        ),
    );
    assert_fails(
        &q,
        call(
            "calculate_triangle_area",
            json!({"base": 10, "height": 5, "unit": "cm"}),
        ),
        "value_error:string",
    );
    assert_fails(
        &q,
        call("triangle_area", json!({"base": 10, "height": 5})),
        "simple_function_checker:wrong_func_name",
    );
    assert_fails(
        &q,
        call("calculate_triangle_area", json!({"base": 10})),
        "simple_function_checker:missing_required",
    );
    assert_fails(
        &q,
        call(
            "calculate_triangle_area",
            json!({"base": 10, "height": 5, "colour": "red"}),
        ),
        "simple_function_checker:unexpected_param",
    );
    assert_fails(
        &q,
        call("calculate_triangle_area", json!({"base": 11, "height": 5})),
        "value_error:others",
    );
    let gold = call("calculate_triangle_area", json!({"base": 10, "height": 5}));
    assert_eq!(
        verdict(&q, &[gold.clone(), gold]),
        Err("simple_function_checker:wrong_count".into())
    );
    assert_eq!(
        verdict(&q, &[]),
        Err("simple_function_checker:wrong_count".into())
    );
}

#[test]
fn types_follow_python_int_float_bool_and_str() {
    let q = question(Category::Simple, "simple_python_0");
    // 10.0 is a float where an integer is described: BFCL's type check refuses it.
    assert_fails(
        &q,
        call(
            "calculate_triangle_area",
            json!({"base": 10.0, "height": 5}),
        ),
        "type_error:simple",
    );
    assert_fails(
        &q,
        call(
            "calculate_triangle_area",
            json!({"base": "10", "height": 5}),
        ),
        "type_error:simple",
    );
    // An int where a float is described is accepted (Python converts it).
    let q = question(Category::Simple, "simple_python_14");
    assert_passes(
        &q,
        call(
            "calculate_derivative",
            json!({"function": "3x^2 + 2x - 1", "x_value": 0}),
        ),
    );
    assert_fails(
        &q,
        call(
            "calculate_derivative",
            json!({"function": "3x^2 + 2x - 1", "x_value": 1}),
        ),
        "value_error:others",
    );
    // ...but not inside an array: [1, 3] for an array of floats answered [1.0, 3.0] fails.
    let q = question(Category::Simple, "simple_python_13");
    assert_passes(
        &q,
        call(
            "calculate_area_under_curve",
            json!({"function": "x**2", "interval": [1.0, 3.0]}),
        ),
    );
    assert_fails(
        &q,
        call(
            "calculate_area_under_curve",
            json!({"function": "x**2", "interval": [1, 3]}),
        ),
        "type_error:nested",
    );
    // A boolean is not an int to the type check, even though True == 1.
    let q = question(Category::Simple, "simple_python_17");
    assert_passes(
        &q,
        call(
            "get_prime_factors",
            json!({"number": 450, "formatted": true}),
        ),
    );
    assert_fails(
        &q,
        call("get_prime_factors", json!({"number": 450})),
        "simple_function_checker:missing_required",
    );
    assert_fails(
        &q,
        call("get_prime_factors", json!({"number": 450, "formatted": 1})),
        "type_error:simple",
    );
    assert_fails(
        &q,
        call(
            "get_prime_factors",
            json!({"number": 450, "formatted": false}),
        ),
        "value_error:others",
    );
}

#[test]
fn strings_are_compared_as_bfcl_standardises_them() {
    assert_eq!(standardize("April 1, 2024"), standardize("april 1 2024"));
    assert_eq!(standardize("3x^2 + 2x - 1"), standardize("3x**2 + 2x - 1"));
    assert_eq!(standardize("it's"), "it\"s");
    let q = question(Category::Multiple, "multiple_5");
    let coords = json!([46.603354, 1.888334]);
    assert_passes(
        &q,
        call(
            "weather.get_by_coordinates_date",
            json!({"coordinates": coords, "date": "2019/12/13"}),
        ),
    );
    assert_fails(
        &q,
        call(
            "weather.get_by_coordinates_date",
            json!({"coordinates": coords, "date": "2019-12-14"}),
        ),
        "value_error:string",
    );
    // Lists: item by item, in order (either listed order is among the answers here).
    let q = question(Category::Simple, "simple_python_37");
    let base = json!({"start_location": "San Francisco", "end_location": "los angeles"});
    let mut a = base.clone();
    a["stops"] = json!(["monterey", "Santa Barbara"]);
    assert_passes(&q, call("route.estimate_time", a));
    let mut b = base.clone();
    b["stops"] = json!(["Monterey"]);
    assert_fails(&q, call("route.estimate_time", b), "value_error:list/tuple");
    let q = question(Category::Simple, "simple_python_83");
    let args = |c1: Value| json!({"coord1": c1, "coord2": [34.0522, -118.2437], "unit": "miles"});
    assert_passes(
        &q,
        call("calculate_distance", args(json!([33.4484, -112.074]))),
    );
    assert_fails(
        &q,
        call("calculate_distance", args(json!([-112.074, 33.4484]))),
        "value_error:list/tuple",
    );
}

#[test]
fn dicts_and_lists_of_dicts() {
    let q = question(Category::Simple, "simple_python_89");
    let args = |conditions: Value| json!({"database_name": "StudentDB", "table_name": "students", "conditions": conditions});
    assert_passes(
        &q,
        call(
            "db_fetch_records",
            args(json!({"department": "science", "school": "Bluebird HS"})),
        ),
    );
    assert_fails(
        &q,
        call("db_fetch_records", args(json!({"department": "Science"}))),
        "value_error:dict_key",
    );
    assert_fails(
        &q,
        call(
            "db_fetch_records",
            args(json!({"department": "Science", "school": "Bluebird HS", "year": "2020"})),
        ),
        "value_error:dict_key",
    );
    assert_fails(
        &q,
        call(
            "db_fetch_records",
            args(json!({"department": "Arts", "school": "Bluebird HS"})),
        ),
        "value_error:dict_value",
    );
    // An optional parameter: omitted or its listed value passes, another value fails.
    let mut with_limit = args(json!({"department": "Science", "school": "Bluebird HS"}));
    with_limit["fetch_limit"] = json!(0);
    assert_passes(&q, call("db_fetch_records", with_limit.clone()));
    with_limit["fetch_limit"] = json!(5);
    assert_fails(
        &q,
        call("db_fetch_records", with_limit),
        "value_error:others",
    );

    let q = question(Category::Simple, "simple_python_96");
    let age = json!({"field": "age", "operation": ">", "value": "25"});
    let job = json!({"field": "job", "operation": "=", "value": "engineer"});
    assert_passes(
        &q,
        call(
            "database.query",
            json!({"table": "user", "conditions": [age, job]}),
        ),
    );
    assert_fails(
        &q,
        call(
            "database.query",
            json!({"table": "user", "conditions": [job, age]}),
        ),
        "value_error:dict_value",
    );
    assert_fails(
        &q,
        call(
            "database.query",
            json!({"table": "user", "conditions": [age]}),
        ),
        "value_error:list_dict_count",
    );
}

#[test]
fn multiple_needs_the_right_function_of_several() {
    let q = question(Category::Multiple, "multiple_0");
    assert!(q.functions.len() > 1);
    assert_passes(
        &q,
        call(
            "triangle_properties.get",
            json!({"side1": 5, "side2": 4, "side3": 3}),
        ),
    );
    assert_fails(
        &q,
        call(
            "triangle_properties.get",
            json!({"side1": 5, "side2": 4, "side3": 3, "get_area": false}),
        ),
        "value_error:others",
    );
    let other = q
        .functions
        .iter()
        .filter_map(|f| f["name"].as_str())
        .find(|n| *n != "triangle_properties.get")
        .unwrap();
    assert_fails(
        &q,
        call(other, json!({"side1": 5, "side2": 4, "side3": 3})),
        "simple_function_checker:wrong_func_name",
    );
}

#[test]
fn irrelevance_is_right_only_without_a_call() {
    let qs = load(&data(), Category::Irrelevance).unwrap();
    assert_eq!(qs.len(), 4);
    for q in &qs {
        assert!(q.ground_truth.is_empty());
        assert_eq!(verdict(q, &[]), Ok(()));
        let name = q.functions[0]["name"].as_str().unwrap();
        assert_eq!(
            verdict(q, &[call(name, json!({}))]),
            Err("irrelevance_error:decoder_success".into())
        );
    }
}

#[test]
fn replies_are_read_with_mapped_names_and_decline() {
    let q = question(Category::Simple, "simple_python_1");
    let names = name_map(&q);
    let tool = names.tool("math.factorial").unwrap();
    assert!(valid_tool_name(tool));
    let reply = read_reply(&format!(
        r#"{{"thought":"factorial","action":"{tool}","parameters":{{"number":5}}}}"#
    ));
    let (calls, v) = score(&q, &names, &reply);
    assert_eq!(calls[0].name, "math.factorial");
    assert!(v.is_ok(), "{v:?}");
    // The dotted name itself is not an offered tool: scored as a wrong name, not mapped.
    let reply = read_reply(r#"{"action":"math.factorial2","parameters":{"number":5}}"#);
    assert!(score(&q, &names, &reply).1.is_err());
    // Declining a relevant question is wrong; declining an irrelevant one is right.
    let decline = read_reply(r#"{"thought":"no","action":"decline","parameters":{"reason":"x"}}"#);
    assert!(score(&q, &names, &decline).1.is_err());
    let irr = question(Category::Irrelevance, "irrelevance_0");
    let irr_names = name_map(&irr);
    assert!(score(&irr, &irr_names, &decline).1.is_ok());
    // An unreadable reply is "no call" to BFCL: wrong here, and marked as a format error.
    let garbage = read_reply("The factorial of 5 is 120.");
    let (calls, v) = score(&q, &names, &garbage);
    assert!(calls.is_empty() && v.is_err());
    let r = BfclResult::new(
        &q,
        "m",
        Decoding::Unconstrained,
        0,
        &garbage,
        &calls,
        &v,
        "x".into(),
        "t",
    );
    assert!(r.format_error && !r.correct);
    let rows = summarise(&[r]);
    assert_eq!(
        (rows[0].n, rows[0].correct, rows[0].format_errors),
        (1, 0, 1)
    );
}

#[test]
fn the_action_schema_offers_mapped_tools_and_decline() {
    let q = question(Category::Multiple, "multiple_0");
    let names = name_map(&q);
    let schema = action_schema(&q, &names);
    let consts: Vec<&str> = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["properties"]["action"]["const"].as_str().unwrap())
        .collect();
    assert_eq!(consts.len(), q.functions.len() + 1);
    assert!(consts.contains(&DECLINE));
    assert!(consts.iter().all(|c| valid_tool_name(c)));
    let system = &messages(&q, &names)[0].content;
    for c in &consts {
        assert!(system.contains(&format!("- {c} ")), "{c} not in the prompt");
    }
    let s = to_json_schema(&json!({"type": "dict", "properties": {
        "x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "integer"}},
        "a": {"type": "any"}, "u": {"type": "string", "enum": ["km", "mi"]}},
        "required": ["x", "ghost"]}));
    assert_eq!(s["type"], "object");
    assert_eq!(s["properties"]["x"]["type"], "number");
    assert_eq!(
        s["properties"]["t"],
        json!({"type": "array", "items": {"type": "integer"}})
    );
    assert_eq!(s["properties"]["a"], json!({}));
    assert_eq!(s["properties"]["u"]["enum"], json!(["km", "mi"]));
    assert_eq!(s["required"], json!(["x"]));
}

#[test]
fn the_sample_is_seeded_and_nested() {
    let all = load(&data(), Category::Simple).unwrap();
    let ids = |qs: Vec<Question>| qs.into_iter().map(|q| q.id).collect::<Vec<_>>();
    let a = ids(sample(all.clone(), Some(5), 7));
    assert_eq!(a.len(), 5);
    assert_eq!(a, ids(sample(all.clone(), Some(5), 7)));
    let bigger = ids(sample(all.clone(), Some(9), 7));
    assert!(a.iter().all(|id| bigger.contains(id)));
    let seeds_differ = (0..8).any(|s| ids(sample(all.clone(), Some(5), s)) != a);
    assert!(seeds_differ);
    assert_eq!(ids(sample(all.clone(), None, 7)).len(), all.len());
    // File order is kept.
    let order: Vec<usize> = a
        .iter()
        .map(|id| all.iter().position(|q| &q.id == id).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_question_without_an_answer_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("possible_answer")).unwrap();
    let q = std::fs::read_to_string(data().join("BFCL_v4_simple_python.json")).unwrap();
    std::fs::write(dir.path().join("BFCL_v4_simple_python.json"), &q).unwrap();
    let a =
        std::fs::read_to_string(data().join("possible_answer/BFCL_v4_simple_python.json")).unwrap();
    let first_dropped: String = a.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(
        dir.path()
            .join("possible_answer/BFCL_v4_simple_python.json"),
        first_dropped,
    )
    .unwrap();
    let err = load(dir.path(), Category::Simple).unwrap_err().to_string();
    assert!(err.contains("has no possible answer"), "{err}");
    let err = load(dir.path(), Category::Multiple)
        .unwrap_err()
        .to_string();
    assert!(err.contains("BFCL_v*_multiple.json"), "{err}");
}
