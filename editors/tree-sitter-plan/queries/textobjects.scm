; Text objects (Helix): a task is a function (`maf`, `mif`), a step, plan or
; template a class (`mac`, `mic`), a template parameter or a `use` argument
; a parameter (`maa`, `mia`), and comments (`mac` on a comment run).

(task) @function.around
(task body: (task_body) @function.inside)

(step) @class.around
(step body: (step_body) @class.inside)
(plan) @class.around
(plan body: (plan_body) @class.inside)
(template) @class.around
(template body: (template_body) @class.inside)

(template_parameters
  ((template_parameter) @parameter.inside . ","? @parameter.around) @parameter.around)
(arguments
  ((argument) @parameter.inside . ","? @parameter.around) @parameter.around)

(comment) @comment.inside
(comment)+ @comment.around
