//! Where a `planc run` command's plan is: a state file, the file of
//! `--session`, or a plan of `--store`, read from the command line.

use super::*;

/// What a `planc run` command acts on: one plan of a store, through the
/// store interface — a plan of `--store`, or the one plan of a state file.
pub(super) struct Target {
    /// The plan.
    pub(super) plan: StorePlan,
    /// The state file, when the plan is one: `watch` prints its event log
    /// as written (a line that is not a record included).
    pub(super) file: Option<Store>,
}

impl Target {
    /// The one plan of the state file `file`.
    fn state_file(file: Store) -> Target {
        Target {
            plan: StorePlan::state_file(file.clone()),
            file: Some(file),
        }
    }

    pub(super) fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        self.plan.apply_as(op, caller)
    }

    pub(super) fn runner(&self) -> Result<runner::Runner, OpError> {
        self.plan.runner()
    }

    /// Reads one reply into the plan ([`PlanAccess::observe_reply`]).
    pub(super) fn observe(
        &self,
        reply: &runner::Reply,
        caller: &Caller,
        goal: Option<&str>,
    ) -> Result<Applied, OpError> {
        <dyn PlanAccess>::observe_reply(&self.plan, reply, caller, goal, |_| Ok(()))
            .map(|(applied, ())| applied)
    }
}

/// Where a command's plan is: its STATE argument, the file of `--session`
/// (never both, never neither), or a plan of `--store` (the STATE argument
/// left out); and the task id argument that follows STATE (with `--session`
/// or `--store` the first positional argument is the id).
pub(super) struct Place {
    session: Option<String>,
    plan: Option<(Arc<dyn PlanStore>, String)>,
    lock_timeout: Option<Duration>,
}

impl Place {
    /// Where the command line puts the plan: opens `--store`, and for the
    /// commands that may create the state, the session's directory.
    pub(super) fn of(args: &RunArgs) -> Result<Place, i32> {
        let creates = matches!(
            args.command,
            RunCommand::Init { .. } | RunCommand::Observe { .. }
        );
        if args.store.is_some() && args.lock_timeout.is_some() {
            // A store waits for its own locks (a JSON store 5 s, SQLite 30 s);
            // a wait it would not keep is refused, not ignored.
            return Err(usage(
                "--lock-timeout (or PLANC_LOCK_TIMEOUT) applies to state files, not to --store: \
                 a store waits for its own locks",
            ));
        }
        let plan = match (&args.store, &args.plan_id) {
            (Some(url), Some(plan_id)) => match runner::open_store(url) {
                Ok(store) => Some((store, plan_id.clone())),
                Err(error) => {
                    return Err(usage(&format!(
                        "cannot open the store {}: {}",
                        escape::line(url),
                        escape::line(&error.message)
                    )))
                }
            },
            _ => None,
        };
        let session = match &args.session {
            Some(key) => Some(session_state(key, creates)?),
            None => None,
        };
        Ok(Place {
            session,
            plan,
            lock_timeout: args.lock_timeout,
        })
    }

    /// The plan of the state file `state`, or of `--store`.
    pub(super) fn target(&self, state: String) -> Target {
        match &self.plan {
            Some((store, plan_id)) => Target {
                plan: StorePlan::new(Arc::clone(store), plan_id.clone()),
                file: None,
            },
            None => Target::state_file(open(&state, self.lock_timeout)),
        }
    }

    /// The plan, for commands without a task id argument.
    pub(super) fn state(&self, state: Option<String>) -> Result<Target, i32> {
        if self.plan.is_some() {
            return match state {
                Some(state) => Err(left_out(&state)),
                None => Ok(self.target(String::new())),
            };
        }
        let state = match (&self.session, state) {
            (Some(_), Some(state)) => return Err(both(&state)),
            (Some(session), None) => session.clone(),
            (None, Some(state)) => state,
            (None, None) => return Err(usage("give the state file (STATE) or --session KEY")),
        };
        Ok(self.target(state))
    }

    /// The plan and the optional task id.
    pub(super) fn with_id(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, Option<String>), i32> {
        if self.plan.is_some() {
            return match id {
                Some(extra) => Err(left_out(&extra)),
                None => Ok((self.target(String::new()), state)),
            };
        }
        let (state, id) = match (&self.session, state, id) {
            (Some(_), Some(state), Some(_)) => return Err(both(&state)),
            (Some(_), Some(first), None) if looks_like_path(&first) => return Err(both(&first)),
            (Some(session), first, None) => (session.clone(), first),
            (None, Some(state), id) => (state, id),
            // Positional arguments fill in order: no id without a state.
            (_, None, _) => return Err(usage("give the state file (STATE) or --session KEY")),
        };
        Ok((self.target(state), id))
    }

    /// The plan and the task id, which the command needs.
    pub(super) fn with_required_id(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, String), i32> {
        self.with_required(state, id, "the task (its id or key)")
    }

    /// [`Place::with_required_id`], the id read as a task reference.
    pub(super) fn with_required_task(
        &self,
        state: Option<String>,
        id: Option<String>,
    ) -> Result<(Target, TaskRef), i32> {
        let (target, id) = self.with_required_id(state, id)?;
        Ok((target, task(&id)))
    }

    /// The plan and the argument after the state file, which the command needs.
    pub(super) fn with_required(
        &self,
        state: Option<String>,
        second: Option<String>,
        what: &str,
    ) -> Result<(Target, String), i32> {
        match self.with_id(state, second)? {
            (target, Some(second)) => Ok((target, second)),
            (_, None) if self.plan.is_some() => Err(usage(&format!("give {what}"))),
            (_, None) => Err(usage(&format!("give {what} after the state file"))),
        }
    }
}

/// A state file argument given with `--store`.
fn left_out(argument: &str) -> i32 {
    usage(&format!(
        "unexpected argument `{}`: with --store the state file is left out",
        escape::line(argument)
    ))
}

/// Whether an argument where a task id may stand is rather a state file.
fn looks_like_path(text: &str) -> bool {
    text.contains(['/', '\\']) || text.ends_with(".json")
}

fn both(state: &str) -> i32 {
    usage(&format!(
        "give either --session or a state file, not both (`{state}` with --session)"
    ))
}

/// The state file of `--session KEY`, its directory created when `create`.
fn session_state(key: &str, create: bool) -> Result<String, i32> {
    let path = runner::session_path(key).map_err(|message| usage(&message))?;
    if create {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|error| {
                output::fatal(&format!("cannot create {}: {error}", dir.display()));
                EXIT_USAGE
            })?;
        }
    }
    Ok(path.display().to_string())
}
