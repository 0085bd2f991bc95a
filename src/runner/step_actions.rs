//! What kind of work a tool call does, and what kinds of work a step's
//! description asks for (its first verb): a reply whose tool calls are all
//! of the next step's kinds and none of the current step's has begun the
//! next step's work even when its text says nothing (a silent turn).

use super::reply::ToolCall;

/// A kind of work, one bit each.
type Kinds = u16;

const NAVIGATE: Kinds = 1;
const INPUT: Kinds = 1 << 1;
const CLICK: Kinds = 1 << 2;
const READ_PAGE: Kinds = 1 << 3;
const SEARCH: Kinds = 1 << 4;
const FETCH: Kinds = 1 << 5;
const READ_CODE: Kinds = 1 << 6;
const EDIT: Kinds = 1 << 7;
const TEST: Kinds = 1 << 8;
const BUILD: Kinds = 1 << 9;
const RUN: Kinds = 1 << 10;
const COMPUTE: Kinds = 1 << 11;

/// Words that test-runner commands hold.
const TEST_COMMANDS: [&str; 12] = [
    "pytest", "jest", "vitest", "mocha", "unittest", "rspec", "phpunit", "tox", "test", "tests",
    "spec", "e2e",
];
/// Words that build, lint and type-check commands hold.
const BUILD_COMMANDS: [&str; 11] = [
    "build", "tsc", "lint", "clippy", "eslint", "mypy", "flake8", "ruff", "check", "compile",
    "make",
];
/// Commands that only read.
const READ_COMMANDS: [&str; 12] = [
    "cat", "grep", "rg", "ls", "find", "head", "tail", "wc", "tree", "less", "du", "git",
];
/// Commands that change files.
const EDIT_COMMANDS: [&str; 7] = ["sed", "mv", "cp", "rm", "mkdir", "touch", "patch"];

/// The kind of work `call` does, when its name says (and, for a shell, its
/// command).
fn call_kind(call: &ToolCall) -> Option<Kinds> {
    let name = call.name.to_ascii_lowercase();
    let has = |parts: &[&str]| parts.iter().any(|p| name.contains(p));
    if name.starts_with("browser") {
        return Some(if has(&["navigate", "go_back", "tab", "reload", "goto"]) {
            NAVIGATE
        } else if has(&["type", "fill", "press", "select", "clear", "upload", "drag"]) {
            INPUT
        } else if has(&["click"]) {
            CLICK
        } else {
            READ_PAGE
        });
    }
    if has(&["search"]) {
        // Searching a codebase reads it; any other search is the web's.
        return Some(if has(&["code", "file", "repo"]) {
            READ_CODE
        } else {
            SEARCH
        });
    }
    if has(&["fetch", "download", "pdf", "scrape", "crawl"]) {
        return Some(FETCH);
    }
    if has(&["read_file", "grep", "list_dir", "view", "glob"]) {
        return Some(READ_CODE);
    }
    if has(&["edit", "write", "patch", "replace", "create_file"]) {
        return Some(EDIT);
    }
    if has(&["python", "sql", "jupyter", "notebook"]) {
        return Some(COMPUTE);
    }
    if has(&["exec", "command", "bash", "shell", "terminal"]) {
        return command_kind(&call.arguments);
    }
    None
}

/// The kind of a shell command: its program (the first word after any
/// `cd dir &&`), or a test or build word anywhere in it.
fn command_kind(arguments: &serde_json::Value) -> Option<Kinds> {
    let command = ["command", "cmd", "script"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(|v| v.as_str()))?
        .to_ascii_lowercase();
    let first_word = |part: &str| -> String {
        part.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect()
    };
    let program = command
        .split("&&")
        .map(first_word)
        .find(|word| word != "cd")
        .unwrap_or_default();
    let words: Vec<&str> = command
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let any = |list: &[&str]| words.iter().any(|w| list.contains(w));
    Some(if READ_COMMANDS.contains(&program.as_str()) {
        READ_CODE
    } else if EDIT_COMMANDS.contains(&program.as_str()) {
        EDIT
    } else if any(&TEST_COMMANDS) {
        TEST
    } else if any(&BUILD_COMMANDS) {
        BUILD
    } else {
        RUN
    })
}

/// Adverbs that may open a step before its verb.
const ADVERBS: [&str; 7] = ["逐个", "逐条", "逐一", "依次", "分别", "先", "再"];

/// The verbs that open a step's description (or a part of it) and the
/// kinds of work each group asks for, first group first.
#[rustfmt::skip]
const STEP_VERBS: [(&[&str], Kinds); 8] = [
    (&["open", "go", "navigate", "visit", "log", "sign", "access",
       "打开", "进入", "访问", "登录", "前往"],
     NAVIGATE | CLICK | READ_PAGE),
    (&["search", "query", "搜索", "检索", "查询", "搜"],
     SEARCH | INPUT | CLICK | NAVIGATE | FETCH | READ_PAGE | COMPUTE),
    (&["fill", "enter", "type", "submit", "book", "filter", "sort", "select", "choose",
       "填写", "输入", "提交", "筛选", "排序", "选择"],
     INPUT | CLICK),
    (&["read", "extract", "collect", "get", "list", "find", "locate", "identify", "inspect",
       "review", "examine", "understand", "investigate", "reproduce", "look", "gather", "scan",
       "explore", "note", "record", "load", "profile",
       "查看", "阅读", "读取", "提取", "收集", "获取", "定位", "确认", "了解", "记录", "浏览",
       "检查", "复现", "调研", "查找", "梳理", "加载", "查", "读", "看", "找"],
     READ_PAGE | FETCH | READ_CODE | SEARCH | COMPUTE),
    (&["fix", "edit", "add", "implement", "update", "change", "modify", "refactor", "replace",
       "remove", "rename", "write", "create", "document", "migrate", "upgrade", "patch", "bump",
       "rewrite",
       "修改", "修复", "添加", "实现", "更新", "编写", "删除", "重构", "替换", "创建", "迁移",
       "升级", "补充", "新建", "写", "改", "加"],
     EDIT),
    (&["run", "test", "verify", "validate", "build",
       "运行", "测试", "验证", "跑", "构建", "执行"],
     TEST | BUILD | RUN),
    (&["download", "save", "export", "upload", "下载", "保存", "导出", "上传"],
     FETCH | CLICK | COMPUTE | EDIT | INPUT),
    (&["analyze", "analyse", "compute", "calculate", "plot", "chart", "clean", "merge",
       "forecast", "train", "fit", "aggregate", "compare", "segment", "normalize", "parse",
       "estimate", "evaluate", "backtest", "join", "count",
       "分析", "计算", "统计", "绘制", "画", "清洗", "合并", "预测", "训练", "建模", "对比",
       "聚合", "比较", "解析"],
     COMPUTE),
];

/// The kinds of work a step asks for: those of the first verb of each of
/// its parts ("Open Taobao and search the model": open, search); none
/// when no part's verb is known (then tool calls say nothing about it).
fn step_kinds(description: &str) -> Option<Kinds> {
    let lower = description.to_lowercase();
    let mut kinds: Option<Kinds> = None;
    for part in lower
        .split([',', '，', '、', ';', '；', '并', '&'])
        .flat_map(|p| p.split(" and "))
        .flat_map(|p| p.split(" then "))
    {
        if let Some(k) = verb_kinds(part) {
            kinds = Some(kinds.unwrap_or(0) | k);
        }
    }
    kinds
}

/// The kinds of work the verb that opens `part` asks for.
fn verb_kinds(part: &str) -> Option<Kinds> {
    let mut part = part.trim_start_matches(|c: char| !c.is_alphanumeric());
    // "逐个修复警告" (fix the warnings one by one): the verb after the adverb.
    for adverb in ADVERBS {
        part = part.strip_prefix(adverb).unwrap_or(part);
    }
    let first_latin: String = part.chars().take_while(char::is_ascii_alphabetic).collect();
    STEP_VERBS.iter().find_map(|(verbs, kinds)| {
        verbs
            .iter()
            .any(|verb| {
                if verb.is_ascii() {
                    first_latin == *verb
                } else {
                    part.starts_with(verb)
                }
            })
            .then_some(*kinds)
    })
}

/// Whether `calls` do the next step's kind of work and not the current
/// step's: every call of a known kind, all of them kinds the next step
/// asks for, none a kind the current step asks for.
pub(super) fn calls_turn_to(calls: &[ToolCall], current: &str, next: &str) -> bool {
    let (Some(mut current), Some(next)) = (step_kinds(current), step_kinds(next)) else {
        return false;
    };
    // Writing code is checked by running it: a step that edits also runs
    // tests and builds, so a run is no sign that it is over.
    if current & EDIT != 0 {
        current |= TEST | BUILD | RUN;
    }
    let mut done: Kinds = 0;
    for call in calls {
        match call_kind(call) {
            Some(kind) => done |= kind,
            None => return false,
        }
    }
    done != 0 && done & current == 0 && done & !next == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn calls(calls: &[(&str, Value)]) -> Vec<ToolCall> {
        calls
            .iter()
            .map(|(name, arguments)| ToolCall {
                name: (*name).to_owned(),
                arguments: arguments.clone(),
            })
            .collect()
    }

    #[test]
    fn a_tool_call_does_a_kind_of_work() {
        let kind = |name: &str, arguments: Value| call_kind(&calls(&[(name, arguments)])[0]);
        assert_eq!(kind("browser_type", json!({"text": "x"})), Some(INPUT));
        assert_eq!(kind("browser_get_text", json!({})), Some(READ_PAGE));
        assert_eq!(kind("fetch_url", json!({"url": "u"})), Some(FETCH));
        assert_eq!(kind("edit_file", json!({"path": "a.py"})), Some(EDIT));
        assert_eq!(kind("python", json!({"code": "1"})), Some(COMPUTE));
        let shell = |command: &str| kind("run_command", json!({ "command": command }));
        assert_eq!(shell("cd frontend && npm test"), Some(TEST));
        assert_eq!(shell("pytest -q"), Some(TEST));
        assert_eq!(shell("cd /srv/app && grep -n foo src"), Some(READ_CODE));
        assert_eq!(shell("npm run lint"), Some(BUILD));
        assert_eq!(shell("npm install lodash"), Some(RUN));
        assert_eq!(kind("password_manager_lookup", json!({})), None);
    }

    #[test]
    fn a_step_asks_for_the_kinds_of_its_verbs() {
        assert_eq!(step_kinds("Fix the parser"), Some(EDIT));
        assert_eq!(step_kinds("运行测试"), Some(TEST | BUILD | RUN));
        assert_eq!(
            step_kinds("打开淘宝并搜索奶粉型号"),
            step_kinds("打开淘宝")
                .zip(step_kinds("搜索奶粉"))
                .map(|(a, b)| a | b)
        );
        assert_eq!(step_kinds("逐个修复警告"), Some(EDIT));
        assert_eq!(step_kinds("Summary of findings"), None);
    }

    #[test]
    fn tool_calls_of_the_next_steps_kind_turn_to_it() {
        let edit = calls(&[("edit_file", json!({"path": "src/a.ts"}))]);
        assert!(calls_turn_to(&edit, "Identify the root cause", "Fix it"));
        // Reading is the current step's kind of work: no turn.
        let read = calls(&[("read_file", json!({"path": "src/a.ts"}))]);
        assert!(!calls_turn_to(&read, "Identify the root cause", "Fix it"));
        // A step that edits code also runs it.
        let test = calls(&[("run_command", json!({"command": "pytest -q"}))]);
        assert!(!calls_turn_to(
            &test,
            "Fix the parser",
            "Run the test suite"
        ));
        assert!(calls_turn_to(
            &test,
            "Review the diff",
            "Run the test suite"
        ));
        let text = calls(&[("browser_get_text", json!({"selector": "#list"}))]);
        assert!(calls_turn_to(
            &text,
            "筛选自营商品",
            "记录前三个商品的名称和价格"
        ));
        // One call of the current step's kind keeps it; so does an unknown tool
        // or a step whose verb is not known.
        let mixed = calls(&[
            ("browser_get_text", json!({})),
            ("browser_click", json!({"selector": "#sort"})),
        ]);
        assert!(!calls_turn_to(
            &mixed,
            "筛选自营商品",
            "记录前三个商品的名称和价格"
        ));
        let unknown = calls(&[("notify", json!({}))]);
        assert!(!calls_turn_to(
            &unknown,
            "Identify the root cause",
            "Fix it"
        ));
        assert!(!calls_turn_to(&edit, "Root cause", "Fix it"));
    }
}
