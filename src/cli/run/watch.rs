//! `planc run watch`: the event log printed, then followed.

use super::*;

/// Prints the committed records of the event log, then follows it until
/// interrupted (unless `no_follow`).
pub(super) fn watch(target: &Target, no_follow: bool, json: bool) -> i32 {
    if let Some(file) = &target.file {
        return watch_file(file, no_follow, json);
    }
    let (store, plan_id) = (target.plan.store(), target.plan.plan_id());
    let mut after = 0;
    loop {
        match store.events(plan_id, after, 1000) {
            Ok(events) => {
                for event in &events {
                    after = event.seq;
                    match serde_json::to_string(&event.record) {
                        Ok(line) => {
                            print_record(&line, json);
                        }
                        Err(error) => {
                            output::fatal(&format!("cannot print an event: {error}"));
                            return EXIT_FAILURE;
                        }
                    }
                }
                if events.len() == 1000 {
                    continue;
                }
            }
            Err(error) => return report(Err(error), json),
        }
        if no_follow {
            return EXIT_OK;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// [`watch`] for a state file: follows its event log.
pub(super) fn watch_file(store: &Store, no_follow: bool, json: bool) -> i32 {
    let mut reader = match store.log_reader() {
        Ok(reader) => reader,
        Err(error) => {
            output::fatal(&error.message);
            return EXIT_USAGE;
        }
    };
    let mut malformed = false;
    loop {
        match reader.read_committed() {
            Ok(lines) => {
                for line in lines {
                    malformed |= !print_record(&line, json);
                }
            }
            Err(error) => {
                output::fatal(&format!(
                    "cannot read {}: {error}",
                    escape::path(&reader.path().to_string_lossy())
                ));
                return EXIT_USAGE;
            }
        }
        if no_follow {
            return if malformed { EXIT_FAILURE } else { EXIT_OK };
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Prints one line of the event log; says whether it was JSON. With
/// `--json` a line that is not is reported on standard error (escaped), so
/// standard output stays a JSON value a line.
fn print_record(line: &str, json: bool) -> bool {
    if json {
        if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
            output::fatal(&format!(
                "the event log holds a line that is not JSON: {}",
                escape::line(line)
            ));
            return false;
        }
        println!("{line}");
        return true;
    }
    match serde_json::from_str::<LogRecord>(line) {
        Ok(record) => {
            for event in &record.events {
                let task = event
                    .task_id
                    .map(|id| format!(" #{id}"))
                    .unwrap_or_default();
                let by = event
                    .agent
                    .as_deref()
                    .map(|agent| format!(" ({})", escape::line(agent)))
                    .unwrap_or_default();
                println!(
                    "r{} {} {}{task}{by}: {}",
                    record.revision,
                    escape::line(&record.at),
                    event.kind.as_str(),
                    escape::line(&event.message)
                );
            }
        }
        Err(_) => println!("{}", escape::line(line)),
    }
    true
}
