//! Every cargo feature of perfgraph-core is documented where users look: the crate docs (`src/lib.rs`,
//! "Cargo features", which docs.rs shows) and the crate's README (crates.io's page). A feature added to
//! `Cargo.toml` without both fails here.

use std::path::Path;

/// The feature names in `Cargo.toml`'s `[features]` table (`default` excluded).
fn features() -> Vec<String> {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let table = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table");
    let table = table.split("\n[").next().unwrap();
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(" = ").map(|(name, _)| name.trim().to_owned()))
        .filter(|name| name != "default")
        .collect()
}

#[test]
fn every_feature_is_in_the_crate_docs_and_the_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let docs: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let section = docs
        .split("# Cargo features")
        .nth(1)
        .expect("a \"Cargo features\" section in the crate docs");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let features = features();
    assert!(features.len() >= 4, "{features:?}");
    for name in &features {
        assert!(
            section.contains(&format!("* `{name}`")),
            "feature `{name}` is not in lib.rs's \"Cargo features\""
        );
        assert!(
            readme.contains(&format!("| `{name}` |")),
            "feature `{name}` is not in README.md's features table"
        );
    }
}
