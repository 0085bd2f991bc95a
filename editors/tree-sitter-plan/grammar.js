/**
 * @file Tree-sitter grammar for planc's `.plan` files.
 *
 * Follows grammar/plan.pest, the language's one source of truth (see
 * docs/language.md); where the pest grammar recovers from mistakes with its
 * `*_bad` rules, tree-sitter's own error recovery does. Generated with the
 * tree-sitter CLI: `tree-sitter generate` writes src/.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const IDENTIFIER = /[\p{XID_Start}_][\p{XID_Continue}]*/;

/**
 * One or more RULEs separated by commas, with an optional trailing comma
 * when TRAILING is set.
 * @param {RuleOrLiteral} rule
 * @param {boolean} trailing
 */
function commaSep1(rule, trailing) {
  const list = seq(rule, repeat(seq(',', rule)));
  return trailing ? seq(list, optional(',')) : list;
}

module.exports = grammar({
  name: 'plan',

  extras: $ => [/[\s\uFEFF]/, $.comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => repeat(choice($.import, $.template, $.plan, $.role, $.param)),

    comment: _ => token(seq('#', /.*/)),

    // ------------------------------------------------------------ files

    import: $ => seq('import', field('path', $.string)),

    plan: $ => seq('plan', field('name', $.identifier), field('body', $.plan_body)),

    plan_body: $ => seq('{', repeat($._plan_item), '}'),

    _plan_item: $ => choice(
      $.task, $.step, $.param, $.role, $.title, $.goal, $.language,
      $.max_iterations, $.transition_rounds, $.fallback_rounds, $.retry, $.use,
    ),

    template: $ => seq(
      'template',
      field('name', $.identifier),
      field('parameters', $.template_parameters),
      field('body', $.template_body),
    ),

    template_parameters: $ => seq('(', optional(commaSep1($.template_parameter, true)), ')'),

    template_parameter: $ => seq(
      field('name', $.identifier),
      ':',
      field('type', alias($.identifier, $.type)),
      optional(seq('=', field('default', $._literal))),
    ),

    template_body: $ => seq('{', repeat(choice($.role, $.step, $.task, $.use)), '}'),

    use: $ => seq(
      'use',
      field('template', $.path),
      field('arguments', $.arguments),
      'as',
      field('name', $.identifier),
      optional(field('body', $.use_body)),
    ),

    arguments: $ => seq('(', optional(commaSep1($.argument, true)), ')'),

    argument: $ => seq(field('name', $.identifier), '=', field('value', $._literal)),

    use_body: $ => seq('{', repeat($.after), '}'),

    // ------------------------------------------------------------ plan items

    title: $ => seq('title', field('value', $.string)),
    goal: $ => seq('goal', field('value', $.string)),
    language: $ => seq('language', field('value', $.string)),
    max_iterations: $ => seq('max_iterations', field('value', $.integer)),
    transition_rounds: $ => seq('transition_rounds', field('value', $.integer)),
    fallback_rounds: $ => seq('fallback_rounds', field('value', $.integer)),

    param: $ => seq(
      'param',
      field('name', $.identifier),
      ':',
      field('type', alias($.identifier, $.type)),
      optional(seq('=', field('default', $._literal))),
    ),

    role: $ => seq('role', field('name', $.identifier), optional(field('description', $.string))),

    step: $ => seq(
      'step',
      field('name', $.identifier),
      optional(field('title', $.string)),
      field('body', $.step_body),
    ),

    step_body: $ => seq('{', repeat(choice($.task, $.after, $.sequential)), '}'),

    task: $ => seq(
      'task',
      field('name', $.identifier),
      // Required by planc (planc check says so); optional here, so a task
      // being typed keeps its highlighting.
      optional(field('title', $.string)),
      optional(field('body', $.task_body)),
    ),

    task_body: $ => seq('{', repeat(choice(
      $.after, $.assignee, $.reasoning, $.description, $.retry, $.optional, $.priority,
    )), '}'),

    // ------------------------------------------------------------ fields

    after: $ => seq('after', commaSep1(field('reference', $.path), false)),
    assignee: $ => seq('assignee', field('role', $.identifier)),
    reasoning: $ => seq('reasoning', field('value', $.string)),
    description: $ => seq('description', field('value', $.string)),
    retry: $ => seq('retry', field('value', $.integer)),
    optional: _ => 'optional',
    priority: $ => seq('priority', field('value', $.identifier)),
    sequential: _ => 'sequential',

    // ------------------------------------------------------------ words

    identifier: _ => IDENTIFIER,

    // A task or step; dotted paths name tasks of template instances.
    path: $ => seq(
      $.identifier,
      repeat(seq(token.immediate('.'), alias(token.immediate(IDENTIFIER), $.identifier))),
    ),

    // ------------------------------------------------------------ literals

    _literal: $ => choice($.string, $.float, $.integer, $.boolean),

    integer: _ => /-?[0-9]+/,
    float: _ => /-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?/,
    boolean: _ => choice('true', 'false'),

    // `"…"` on one line, or `"""…"""` over lines (which may hold `"` and
    // `""`). Inside either: text, escapes, `{{` and `}}`, and `{param}`.
    string: $ => choice(
      seq(
        '"',
        repeat(choice(alias($._text, $.string_content), $.escape_sequence, $.interpolation)),
        token.immediate('"'),
      ),
      seq(
        '"""',
        repeat(choice(
          alias($._triple_text, $.string_content),
          alias($._lone_quote, $.string_content),
          $.escape_sequence,
          $.interpolation,
        )),
        '"""',
      ),
    ),

    _text: _ => token.immediate(prec(1, /[^"\\{}\r\n]+/)),
    _triple_text: _ => token.immediate(prec(1, /[^"\\{}]+/)),
    // Without precedence, so that `"""`, longer, ends the string.
    _lone_quote: _ => token.immediate('"'),

    escape_sequence: _ => token.immediate(prec(1, choice(
      /\\["\\ntr0{}]/,
      /\\u\{[0-9a-fA-F]{1,6}\}/,
      '{{',
      '}}',
    ))),

    interpolation: $ => seq(
      token.immediate(prec(1, '{')),
      field('name', $.identifier),
      '}',
    ),
  },
});
