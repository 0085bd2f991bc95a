; Highlighting for .plan files, in Helix's capture names. Where several
; patterns capture one node, the last one wins (as in Helix, Neovim, Zed and
; the tree-sitter CLI), so punctuation and keywords come first and the names
; after them. The scopes mirror the VS Code grammar's
; (editors/vscode/syntaxes/plan.tmLanguage.json).

; Punctuation.
["{" "}" "(" ")"] @punctuation.bracket
["," "." ":"] @punctuation.delimiter
"=" @operator

; Keywords.
["plan" "template" "step" "task" "role" "param"] @keyword.storage.type
["import" "use" "as"] @keyword.control.import
[
  "title" "goal" "language" "max_iterations" "transition_rounds"
  "fallback_rounds" "after" "assignee" "reasoning" "description" "retry"
  "priority"
] @keyword
(optional) @keyword
(sequential) @keyword

; Literals.
(integer) @constant.numeric.integer
(float) @constant.numeric.float
(boolean) @constant.builtin.boolean

; Strings: escapes and `{param}` inside them.
(string) @string
(escape_sequence) @constant.character.escape
(interpolation ["{" "}"] @punctuation.special)
(interpolation name: (identifier) @variable.parameter)

; References.
(after reference: (path (identifier) @variable.other.member))
(assignee role: (identifier) @type)
(priority value: (identifier) @constant)
(type) @type.builtin

; Declarations: the names they declare.
(plan name: (identifier) @namespace)
(template name: (identifier) @function)
(step name: (identifier) @label)
(task name: (identifier) @function)
(role name: (identifier) @type)
(param name: (identifier) @variable.parameter)
(template_parameter name: (identifier) @variable.parameter)
(use template: (path (identifier) @function))
(use name: (identifier) @namespace)
(argument name: (identifier) @variable.parameter)

(comment) @comment
