use planc::check::Options;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let size: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let rounds: usize = std::env::args()
        .nth(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let text = planc::generate::plan_source(size, false);
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let parsed = planc::syntax::parse(&text, planc::span::FileId(0));
        eprintln!("parse {:?}", t.elapsed());
        if which == "parse" {
            continue;
        }
        let t = std::time::Instant::now();
        let checked =
            planc::check::check(&parsed.file, planc::span::FileId(0), &Options::default());
        eprintln!("check {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let c = planc::compile("g", &text, &Options::default());
        let doc = c.document().unwrap();
        eprintln!("compile+doc {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let s = doc.to_json();
        eprintln!("json {:?} {}", t.elapsed(), s.len());
        let _ = checked;
    }
}
