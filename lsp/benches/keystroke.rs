//! One keystroke on a 10,000-task plan: the `didChange` notification goes in
//! over the protocol, and the time runs until the server has published the
//! new diagnostics. Run with `cargo bench -p planc-lsp --bench keystroke`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{find, TestClient};

fn main() {
    divan::main();
}

/// A plan of `tasks` tasks in steps of 100: each step sequential, each
/// step's first task after the previous step's last.
fn generated_plan(tasks: usize) -> String {
    let mut text = String::from(
        "plan big {\n    goal \"Ship {product}\"\n    param product: string = \"widget\"\n    role worker \"Does the work\"\n",
    );
    for step in 0..tasks.div_ceil(100) {
        text.push_str(&format!(
            "    step s{step} \"Step {step}\" {{\n        sequential\n"
        ));
        for n in step * 100..((step + 1) * 100).min(tasks) {
            let after = if n % 100 == 0 && n > 0 {
                format!(" after t{}", n - 1)
            } else {
                String::new()
            };
            text.push_str(&format!(
                "        task t{n} \"Task {n} of {{product}}\" {{ assignee worker{after} reasoning \"Because {n} comes next.\" }}\n"
            ));
        }
        text.push_str("    }\n");
    }
    text.push_str("}\n");
    text
}

#[divan::bench(args = [1_000, 10_000], sample_count = 30)]
fn keystroke(bencher: divan::Bencher, tasks: usize) {
    type_and_delete(bencher, tasks, "x", false);
}

/// A keystroke that leaves a mistake in the middle of the file (an unclosed
/// string), and the one that mends it: the grammar reads the file from the
/// item with the mistake on and explains it.
#[divan::bench(args = [1_000, 10_000], sample_count = 30)]
fn keystroke_with_mistake(bencher: divan::Bencher, tasks: usize) {
    type_and_delete(bencher, tasks, "\"", true);
}

/// Types `typed` in the middle of a generated plan, or deletes it again,
/// once per iteration; waits each time for the diagnostics (some after
/// typing when `leaves_mistake`, none otherwise).
fn type_and_delete(bencher: divan::Bencher, tasks: usize, typed: &str, leaves_mistake: bool) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let text = generated_plan(tasks);
    let (line, col) = find(&text, &format!("Because {} comes", tasks / 2), 8);
    let mut client = runtime.block_on(async {
        let mut client = TestClient::start().await;
        let published = client.open(&text).await;
        assert_eq!(published["diagnostics"], serde_json::json!([]));
        client
    });
    let mut version = 1;
    bencher.bench_local(|| {
        runtime.block_on(async {
            // Type, or delete again: the text stays the same size.
            version += 1;
            let typing = version % 2 == 0;
            if typing {
                client.edit(version, (line, col), (line, col), typed).await;
            } else {
                client.edit(version, (line, col), (line, col + 1), "").await;
            }
            let published = client.diagnostics().await;
            assert_eq!(published["version"], version);
            let found = published["diagnostics"].as_array().map_or(0, Vec::len);
            assert_eq!(found > 0, typing && leaves_mistake, "{published}");
        })
    });
}

/// The library's share of a keystroke: parsing and checking the whole file.
#[divan::bench(args = [10_000], sample_count = 20)]
fn compile(bencher: divan::Bencher, tasks: usize) {
    let text = generated_plan(tasks);
    bencher.bench(|| planc::compile("big.plan", &text, &planc::check::Options::default()));
}

/// Parsing alone.
#[divan::bench(args = [10_000], sample_count = 20)]
fn parse(bencher: divan::Bencher, tasks: usize) {
    let text = generated_plan(tasks);
    bencher.bench(|| planc::syntax::parse(&text, planc::span::FileId(0)));
}
