//! The shipped scenarios the page offers under "Open an example", and the
//! page's guide against `docs/guide.md`.

use sojourn_app::form::import_scenario;
use sojourn_app::panels::guide::CHECKLIST;
use sojourn_app::panels::toolbar::EXAMPLES;

fn repository() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_example_decodes_and_validates() {
    for example in EXAMPLES {
        let (params, problems) =
            import_scenario(example.json).unwrap_or_else(|e| panic!("{}: {e}", example.file));
        assert!(problems.is_empty(), "{}: {problems:?}", example.file);
        assert!(!params.name.is_empty(), "{} has no name", example.file);
    }
}

/// A file added to `scenarios/` must be added to the menu too.
#[test]
fn the_menu_offers_every_shipped_scenario() {
    let mut shipped: Vec<String> = std::fs::read_dir(repository().join("scenarios"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    shipped.sort();
    let mut offered: Vec<String> = EXAMPLES.iter().map(|e| e.file.to_string()).collect();
    offered.sort();
    assert_eq!(offered, shipped);
}

/// The page's checklist asks the questions `docs/guide.md` answers.
#[test]
fn the_page_checklist_is_the_guides() {
    let guide = std::fs::read_to_string(repository().join("docs/guide.md")).unwrap();
    for (question, _) in CHECKLIST {
        assert!(
            guide.contains(&format!("| {question} |")),
            "docs/guide.md does not answer {question:?}"
        );
    }
}
