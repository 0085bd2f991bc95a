//! The exact text of every `planc build --target` for a document that has
//! every field a target writes or keeps in its `planc` object: statuses a
//! format reads back as others, a holder, retries, other formats' fields
//! (task-master's `details`, Plan-Act's `attachments`, an `extra` member
//! named like a member of the target), subtasks by key, steps and roles.

use crate::support::Test;

const DOCUMENT: &str = "tests/documents/valid/every_field_a_target_carries.json";

#[test]
fn every_target_of_a_document_with_every_field() {
    for (name, _) in planc::emit::Target::ALL {
        let output = Test::new(["build", DOCUMENT, "--target", name]).expect_code(0);
        insta::assert_snapshot!(format!("every_field_to_{name}"), output.stdout);
    }
    let output = Test::new([
        "build",
        DOCUMENT,
        "--target",
        "taskmaster",
        "--tag",
        "feature",
    ])
    .expect_code(0);
    insta::assert_snapshot!("every_field_to_taskmaster_tagged", output.stdout);
}
