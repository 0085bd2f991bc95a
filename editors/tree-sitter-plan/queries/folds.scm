; Folding: bodies in braces, parameter and argument lists, and strings over
; several lines (`"""`), as planc lsp's folding ranges.
[
  (plan_body)
  (template_body)
  (step_body)
  (task_body)
  (use_body)
  (template_parameters)
  (arguments)
] @fold

(string "\"\"\"") @fold
