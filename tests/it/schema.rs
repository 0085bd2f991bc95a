//! The shipped plan-document schema is the one generated from the Rust
//! types. After changing the document types, regenerate it with
//! `UPDATE_SCHEMA=1 cargo test --test it schema::`.

#[test]
fn shipped_schema_is_the_generated_one() {
    let generated = planc::document::schema();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/planc-1.schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write schema/planc-1.schema.json");
        return;
    }
    let shipped = std::fs::read_to_string(&path).expect("read schema/planc-1.schema.json");
    assert!(
        shipped == generated,
        "schema/planc-1.schema.json is not the schema generated from the document types; \
         run `UPDATE_SCHEMA=1 cargo test --test it schema::` and review the diff.\n{}",
        similar::TextDiff::from_lines(&shipped, &generated)
            .unified_diff()
            .header("shipped", "generated")
    );
    // The binary embeds the same text.
    assert_eq!(planc::document::SCHEMA, generated);
}

/// The shipped schema of the event streams' events (`GET
/// /api/schema/events.json`) is the one generated from the Rust types.
#[test]
fn shipped_events_schema_is_the_generated_one() {
    let generated = planc::serve::events::schema();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/events.schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write schema/events.schema.json");
        return;
    }
    let shipped = std::fs::read_to_string(&path).expect("read schema/events.schema.json");
    assert!(
        shipped == generated,
        "schema/events.schema.json is not the schema generated from the event types; \
         run `UPDATE_SCHEMA=1 cargo test --test it schema::` and review the diff.\n{}",
        similar::TextDiff::from_lines(&shipped, &generated)
            .unified_diff()
            .header("shipped", "generated")
    );
}
