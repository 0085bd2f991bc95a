; Indentation (Helix): one level inside braces and parentheses, as
; `planc fmt` lays a file out; a line that begins with `}` or `)` one less.
[
  (plan_body)
  (template_body)
  (step_body)
  (task_body)
  (use_body)
  (template_parameters)
  (arguments)
] @indent

["}" ")"] @outdent
