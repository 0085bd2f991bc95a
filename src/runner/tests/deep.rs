//! Plan documents whose shape is deep: the runner's walks keep their own
//! stacks, so a million tasks fit a small thread stack.

use super::*;

#[test]
fn a_cycle_of_a_million_tasks_is_refused_on_a_small_stack() {
    let n: u32 = 1_000_000;
    // Task i waits for task i + 1, the last for the first.
    let tasks = (1..=n)
        .map(|id| TaskDoc::pending(id, format!("t{id}"), vec![id % n + 1]))
        .collect();
    let doc = PlanDocument::new(Meta::new("t", "test"), tasks);
    let error = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || Runner::new(doc).map(|_| ()))
        .unwrap()
        .join()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::CircularDependency);
    assert_eq!(
        error.details["cycle"].as_array().unwrap().len(),
        n as usize + 1
    );
}
