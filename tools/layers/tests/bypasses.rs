//! The ways a use can cross layers, each one caught: the old regex check
//! missed nested use groups, `super::` from a top-level module, names the
//! crate root re-exports, and paths inside macros.

// Tests may panic on what they assert.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sojourn_layers::layers::{Layers, as_one_module, problems};
use sojourn_layers::paths::{Use, uses};

/// A crate of `low` (layer 0) and `high` (layer 1) whose `low` module's
/// file is `low`, and which re-exports `high::Answer` at its root.
fn crate_with(low: &str) -> BTreeMap<PathBuf, String> {
    BTreeMap::from([
        (
            PathBuf::from("lib.rs"),
            "mod low;\nmod high;\npub use high::Answer;\n".to_string(),
        ),
        (PathBuf::from("low.rs"), low.to_string()),
        (
            PathBuf::from("high/mod.rs"),
            "pub struct Answer;\npub mod deep;\n".to_string(),
        ),
        (PathBuf::from("high/deep.rs"), "pub fn f() {}\n".to_string()),
    ])
}

const LAYERS: Layers = Layers {
    layers: &[&["low"], &["high"]],
    cycles_inside: &[],
};

/// The uses of `high` by `low`, as (file, line).
fn upward(low: &str) -> Vec<(PathBuf, usize)> {
    let sources = crate_with(low);
    let (_, found) = uses(&sources, Path::new("lib.rs")).expect("parses");
    found
        .into_iter()
        .filter(|u| u.from == "low" && u.to == "high")
        .map(|u| (u.file, u.line))
        .collect()
}

fn caught(low: &str) -> bool {
    !upward(low).is_empty()
}

#[test]
fn a_plain_use_is_caught_with_its_file_and_line() {
    assert_eq!(
        upward("\nuse crate::high::Answer;\n"),
        vec![(PathBuf::from("low.rs"), 2)]
    );
}

#[test]
fn a_nested_use_group_is_caught() {
    assert!(caught("use crate::{low as _, high::{deep::{f}}};\n"));
    assert!(caught("use crate::{high};\n"));
    assert!(!caught("use crate::{low::{self}};\n"));
}

#[test]
fn super_from_a_top_level_module_is_caught() {
    assert!(caught("use super::high::Answer;\n"));
    assert!(caught("fn g() { super::high::deep::f(); }\n"));
    // From an inline module, two levels up.
    assert!(caught("mod inner { use super::super::high::Answer; }\n"));
    // One level up from the inline module is `low` itself.
    assert!(!caught(
        "mod inner { use super::Thing; }\npub struct Thing;\n"
    ));
}

#[test]
fn a_name_the_crate_root_re_exports_is_caught() {
    assert!(caught("use crate::Answer;\n"));
    assert!(caught("fn g() -> crate::Answer { crate::Answer }\n"));
    // A glob of the crate root opens whatever it imports.
    assert!(caught("use super::*;\n"));
}

#[test]
fn paths_in_macros_and_attribute_strings_are_caught() {
    assert!(caught(
        "fn g() { let _ = format!(\"{:?}\", crate::high::deep::f()); }\n"
    ));
    assert!(caught(
        "fn g() { assert!(matches!(1, 1), \"{}\", { crate::high::deep::f(); 1 }); }\n"
    ));
    assert!(caught(
        "#[serde(with = \"crate::high::deep\")]\npub struct S;\n"
    ));
}

#[test]
fn doc_links_and_visibility_name_no_dependency() {
    assert!(!caught("/// See [`crate::high::Answer`].\npub struct S;\n"));
    assert!(!caught(
        "//! Feeds [`crate::high`].\npub(in crate::low) struct S;\n"
    ));
    assert!(!caught(
        "// crate::high::Answer in a comment\npub struct S;\n"
    ));
    // A local module of the same name is not the crate's.
    assert!(!caught(
        "mod high { pub struct Answer; }\nuse self::high::Answer;\n"
    ));
}

#[test]
fn modules_are_found_where_rustc_finds_them() {
    let mut sources = crate_with("#[path = \"elsewhere.rs\"]\nmod child;\n");
    sources.insert(
        PathBuf::from("elsewhere.rs"),
        "use super::super::high::Answer;\n".to_string(),
    );
    let (_, found) = uses(&sources, Path::new("lib.rs")).expect("parses");
    assert!(
        found
            .iter()
            .any(|u| u.from == "low" && u.to == "high" && u.file == Path::new("elsewhere.rs"))
    );
    let missing = crate_with("mod nowhere;\n");
    let error = uses(&missing, Path::new("lib.rs")).expect_err("no file");
    assert!(error.contains("mod nowhere;"), "{error}");
}

#[test]
fn upward_uses_and_cycles_are_problems_and_downward_ones_are_not() {
    let modules: BTreeSet<String> = ["low", "high"].map(String::from).into();
    let at = |from: &str, to: &str| Use {
        from: from.to_string(),
        to: to.to_string(),
        from_child: None,
        to_child: None,
        test: false,
        file: PathBuf::from("x.rs"),
        line: 1,
    };
    assert_eq!(
        problems(&LAYERS, &modules, &[at("high", "low")]),
        Vec::<String>::new()
    );
    let up = problems(&LAYERS, &modules, &[at("low", "high")]);
    assert_eq!(
        up,
        vec!["upward dependency: low (layer 0) uses high (layer 1) at x.rs:1"]
    );
    let both = problems(&LAYERS, &modules, &[at("low", "high"), at("high", "low")]);
    assert!(
        both.iter().any(|p| p.starts_with("cycle: high <-> low")),
        "{both:?}"
    );
    let extra: BTreeSet<String> = ["low", "high", "new"].map(String::from).into();
    assert!(problems(&LAYERS, &extra, &[])[0].starts_with("unlayered module: new"));
}

/// A crate whose `low` module has children `a` and `b`.
fn children(a: &str, b: &str) -> Vec<String> {
    let sources = BTreeMap::from([
        (PathBuf::from("lib.rs"), "mod low;\n".to_string()),
        (PathBuf::from("low/mod.rs"), "mod a;\nmod b;\n".to_string()),
        (PathBuf::from("low/a.rs"), a.to_string()),
        (PathBuf::from("low/b.rs"), b.to_string()),
    ]);
    let (modules, found) = uses(&sources, Path::new("lib.rs")).expect("parses");
    let layers = Layers {
        layers: &[&["low"]],
        cycles_inside: &[],
    };
    problems(&layers, &modules, &found)
}

#[test]
fn children_of_one_module_that_use_each_other_are_a_cycle_unless_in_tests() {
    let found = children(
        "use super::b::g;\npub fn f() {}\n",
        "use crate::low::a::f;\npub fn g() {}\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .starts_with("cycle inside low: a <-> b (a -> b at low/a.rs:1; b -> a at low/b.rs:1)"),
        "{found:?}"
    );
    // One way is a layer.
    assert!(children("use super::b::g;\n", "pub fn g() {}\n").is_empty());
    // A test may use what it tests and its neighbours.
    let test = children(
        "pub fn f() {}\n#[cfg(test)]\nmod tests { use super::super::b::g; }\n",
        "use crate::low::a::f;\npub fn g() {}\n",
    );
    assert!(test.is_empty(), "{test:?}");
}

#[test]
fn a_module_listed_as_cyclic_inside_is_excused() {
    let sources = BTreeMap::from([
        (PathBuf::from("lib.rs"), "mod low;\n".to_string()),
        (PathBuf::from("low/mod.rs"), "mod a;\nmod b;\n".to_string()),
        (PathBuf::from("low/a.rs"), "use super::b::g;\n".to_string()),
        (PathBuf::from("low/b.rs"), "use super::a::f;\n".to_string()),
    ]);
    let (modules, found) = uses(&sources, Path::new("lib.rs")).expect("parses");
    let layers = Layers {
        layers: &[&["low"]],
        cycles_inside: &[("low", "a reason")],
    };
    assert!(problems(&layers, &modules, &found).is_empty());
}

/// A crate whose root is one module (the planner): a cycle between its
/// top-level modules is a cycle inside that module, caught unless excused.
#[test]
fn a_cycle_between_the_modules_of_a_one_module_crate_is_caught() {
    let sources = BTreeMap::from([
        (PathBuf::from("lib.rs"), "mod a;\nmod b;\n".to_string()),
        (
            PathBuf::from("a.rs"),
            "use crate::b::B;\npub struct A;\n".to_string(),
        ),
        (
            PathBuf::from("b.rs"),
            "use super::a::A;\npub struct B;\n".to_string(),
        ),
    ]);
    let found = as_one_module("plan", uses(&sources, Path::new("lib.rs")).expect("parses"));
    let strict = Layers {
        layers: &[&["plan"]],
        cycles_inside: &[],
    };
    let wrong = problems(&strict, &found.0, &found.1);
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(wrong[0].starts_with("cycle inside plan: a"), "{wrong:?}");
    let excused = Layers {
        layers: &[&["plan"]],
        cycles_inside: &[("plan", "a debt")],
    };
    assert_eq!(problems(&excused, &found.0, &found.1), Vec::<String>::new());
}
