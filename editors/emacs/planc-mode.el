;;; planc-mode.el --- Major mode for planc's .plan files -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages
;; URL: docs/editors.md in planc's repository

;;; Commentary:

;; A major mode for `.plan' files (planc's plan language,
;; docs/language.md): highlighting that mirrors the VS Code extension's
;; TextMate scopes (editors/vscode/syntaxes/plan.tmLanguage.json), `#'
;; comments, `"' and `"""' strings, indentation by braces as `planc fmt'
;; lays a file out, and the language server `planc lsp' registered with
;; Eglot and with lsp-mode (whichever is loaded).
;;
;;   (add-to-list 'load-path "/path/to/planc/editors/emacs")
;;   (require 'planc-mode)
;;   (add-hook 'planc-mode-hook #'eglot-ensure)   ; or #'lsp-deferred
;;
;; `planc-format-buffer' (C-c C-f) formats through the language server
;; when Eglot or lsp-mode manages the buffer, and with `planc fmt -'
;; otherwise.

;;; Code:

(require 'rx)
(require 'subr-x)                       ; string-trim, before Emacs 29

(defgroup planc nil
  "Editing planc's .plan files."
  :group 'languages
  :prefix "planc-")

(defcustom planc-indent-offset 4
  "Columns a brace indents its body by (`planc fmt' uses 4)."
  :type 'integer
  :safe #'integerp)

(defcustom planc-executable "planc"
  "The `planc' program: `planc fmt' formats without a language server."
  :type 'string)

(defcustom planc-lsp-command '("planc" "lsp")
  "The command that starts planc's language server.
Read when Eglot or lsp-mode is first loaded after this file."
  :type '(repeat string))

;;;; Faces (each mirrors a TextMate scope of the VS Code grammar)

(defface planc-field-keyword-face
  '((t :inherit font-lock-builtin-face))
  "Field keywords: `title', `goal', `after', `assignee' … (keyword.other.field).")

(defface planc-reference-face
  '((t :inherit font-lock-constant-face))
  "Task and step names in `after' lists (variable.other.reference).")

(defface planc-number-face
  '((t :inherit font-lock-constant-face))
  "Numbers (constant.numeric).")

(defface planc-escape-face
  '((t :inherit font-lock-regexp-grouping-backslash))
  "Escapes and `{{' `}}' in strings (constant.character.escape).")

(defface planc-interpolation-face
  '((t :inherit font-lock-variable-name-face))
  "A `{param}' inside a string (variable.parameter.interpolation).")

;;;; Syntax

(defconst planc--name
  (rx (any alpha "_") (* (any alnum "_")))
  "A name: a letter or `_', then letters, digits or `_' (Unicode).")

(defconst planc--path
  (concat planc--name "\\(?:\\." planc--name "\\)*")
  "A reference to a task or step; dotted paths name template instances' tasks.")

(defconst planc-declaration-keywords
  '("plan" "template" "step" "task" "role" "param")
  "Keywords that declare something (keyword.declaration).")

(defconst planc-import-keywords '("import" "use" "as")
  "Keywords of reuse (keyword.control.import).")

(defconst planc-field-keywords
  '("title" "goal" "language" "max_iterations" "transition_rounds"
    "fallback_rounds" "after" "assignee" "reasoning" "description" "retry"
    "optional" "priority" "sequential")
  "Keywords that set a field (keyword.other.field).")

(defconst planc--keyword
  (concat "\\_<"
          (regexp-opt (append planc-declaration-keywords planc-import-keywords
                              planc-field-keywords)
                      t)
          "\\_>")
  "Any keyword of the language, as a whole symbol.")

(defvar planc-mode-syntax-table
  (let ((table (make-syntax-table)))
    (modify-syntax-entry ?# "<" table)
    (modify-syntax-entry ?\n ">" table)
    (modify-syntax-entry ?\" "\"" table)
    (modify-syntax-entry ?\\ "\\" table)
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?. "." table)
    (modify-syntax-entry ?, "." table)
    (modify-syntax-entry ?: "." table)
    (modify-syntax-entry ?= "." table)
    (modify-syntax-entry ?- "." table)
    (modify-syntax-entry ?{ "(}" table)
    (modify-syntax-entry ?} "){" table)
    (modify-syntax-entry ?\( "()" table)
    (modify-syntax-entry ?\) ")(" table)
    table)
  "Syntax table of `planc-mode': `#' comments, `\"' strings, braces.")

(defun planc--propertize-triple-quote ()
  "Make the `\"\"\"' just matched open or close a string fence.
One opening outside strings and comments marks its first quote as a
string fence; one inside a `\"\"\"' string marks its last quote, so the
string's text (which may hold single `\"') is one string."
  (let* ((start (match-beginning 0))
         (ppss (save-excursion (save-match-data (syntax-ppss start))))
         (fence (string-to-syntax "|"))
         (punctuation (string-to-syntax ".")))
    (cond
     ((nth 4 ppss) nil)
     ((eq (nth 3 ppss) t)
      (put-text-property start (+ start 2) 'syntax-table punctuation)
      (put-text-property (+ start 2) (+ start 3) 'syntax-table fence))
     ((nth 3 ppss) nil)
     (t
      (put-text-property start (1+ start) 'syntax-table fence)
      (put-text-property (1+ start) (+ start 3) 'syntax-table punctuation)))))

(defconst planc--syntax-propertize
  (syntax-propertize-rules
   ("\"\"\"" (0 (ignore (planc--propertize-triple-quote)))))
  "Marks `\"\"\"' strings, which the syntax table alone cannot express.")

;;;; Highlighting

(defun planc--after-list-end ()
  "The end of the references after the `after' just before point.
A list may span lines (`after a,' then `b' on the next); it ends at a
name that no `,' follows, and never takes a keyword."
  (save-excursion
    (let ((end (point))
          (more t))
      (while more
        (skip-chars-forward " \t\r\n")
        (if (or (looking-at-p planc--keyword) (not (looking-at planc--path)))
            (setq more nil)
          (goto-char (match-end 0))
          (setq end (point))
          (skip-chars-forward " \t\r\n")
          (if (eq (char-after) ?,)
              (forward-char 1)
            (setq more nil))))
      end)))

(defun planc--in-string-p (position)
  "Whether POSITION is inside a string."
  (save-excursion (save-match-data (nth 3 (syntax-ppss position)))))

(defun planc--brace-opens-p (position)
  "Whether the `{' at POSITION opens an interpolation.
A run of braces pairs up from its left (`{{' is a literal `{'), and a
backslash before the run escapes its first brace."
  (save-excursion
    (goto-char position)
    (let* ((braces (1+ (- (skip-chars-backward "{"))))
           (backslashes (- (skip-chars-backward "\\\\")))
           (unpaired (- braces (% backslashes 2))))
      (= (% unpaired 2) 1))))

(defun planc--match-in-string (regexp limit &optional predicate)
  "Search for REGEXP before LIMIT, inside a string only.
PREDICATE, when given, is called with the match's start and must
agree too."
  (let (found)
    (while (and (not found) (re-search-forward regexp limit t))
      (let ((start (match-beginning 0)))
        (when (and (planc--in-string-p start)
                   (or (null predicate)
                       (save-match-data (funcall predicate start))))
          (setq found t))))
    found))

(defun planc--match-interpolation (limit)
  "Find the next `{name}' interpolation in a string before LIMIT."
  (planc--match-in-string
   (concat "{[ \t]*\\(" planc--name "\\)[ \t]*}") limit #'planc--brace-opens-p))

(defun planc--match-escape (limit)
  "Find the next escape (`\\n', `\\u{…}', `{{', `}}') in a string before LIMIT."
  (planc--match-in-string
   "\\\\\\(?:[\"\\\\ntr0{}]\\|u{[0-9a-fA-F]\\{1,6\\}}\\)\\|{{\\|}}" limit))

(defun planc--match-bad-escape (limit)
  "Find the next backslash in a string before LIMIT that escapes nothing known."
  (planc--match-in-string "\\\\[^\"\\\\ntr0{}u]" limit))

(defun planc--declaration (keyword face)
  "A highlighter for KEYWORD followed by the name it declares, in FACE."
  `(,(concat "\\_<\\(" keyword "\\)\\_>[ \t]+\\(" planc--name "\\)")
    (1 font-lock-keyword-face)
    (2 ',face)))

(defconst planc-font-lock-keywords
  `(,(planc--declaration "plan" 'font-lock-function-name-face)
    ,(planc--declaration "template" 'font-lock-function-name-face)
    ,(planc--declaration "step" 'font-lock-function-name-face)
    ,(planc--declaration "task" 'font-lock-function-name-face)
    ,(planc--declaration "role" 'font-lock-type-face)
    (,(concat "\\_<\\(param\\)\\_>[ \t]+\\(" planc--name "\\)"
              "\\(?:[ \t]*:[ \t]*\\(" planc--name "\\)\\)?")
     (1 font-lock-keyword-face)
     (2 font-lock-variable-name-face)
     (3 font-lock-type-face nil t))
    ;; A template's parameter: `name: type'.
    (,(concat "\\(" planc--name "\\)[ \t]*:[ \t]*"
              "\\_<\\(string\\|int\\|float\\|bool\\)\\_>")
     (1 font-lock-variable-name-face)
     (2 font-lock-type-face))
    ("\\_<\\(after\\)\\_>"
     (1 'planc-field-keyword-face)
     (,(concat "\\_<" planc--path) (planc--after-list-end) nil
      (0 'planc-reference-face)))
    (,(concat "\\_<\\(assignee\\)\\_>[ \t]+\\(" planc--name "\\)")
     (1 'planc-field-keyword-face)
     (2 font-lock-type-face))
    (,(concat "\\_<\\(use\\)\\_>[ \t]+\\(" planc--path "\\)")
     (1 font-lock-keyword-face)
     (2 font-lock-function-name-face))
    (,(concat "\\_<\\(as\\)\\_>[ \t]+\\(" planc--name "\\)")
     (1 font-lock-keyword-face)
     (2 font-lock-function-name-face))
    (,(concat "\\_<" (regexp-opt (append planc-declaration-keywords
                                         planc-import-keywords)
                                 t)
              "\\_>")
     . font-lock-keyword-face)
    (,(concat "\\_<" (regexp-opt planc-field-keywords t) "\\_>")
     . 'planc-field-keyword-face)
    ("\\_<\\(true\\|false\\)\\_>" . font-lock-constant-face)
    ("\\(-?\\_<[0-9]+\\(?:\\.[0-9]+\\(?:[eE][+-]?[0-9]+\\)?\\)?\\)\\_>"
     (1 'planc-number-face))
    (planc--match-escape (0 'planc-escape-face prepend))
    (planc--match-bad-escape (0 font-lock-warning-face prepend))
    (planc--match-interpolation (1 'planc-interpolation-face prepend)))
  "What `planc-mode' highlights beyond strings and comments.")

;;;; Indentation

(defun planc--indentation ()
  "The column the current line belongs at, or nil inside a string.
As `planc fmt' lays a file out: `planc-indent-offset' per open brace
or parenthesis, one less on a line that begins by closing one.  Lines
inside a `\"\"\"' string are its text and stay as they are."
  (save-excursion
    (let ((ppss (syntax-ppss (line-beginning-position))))
      (unless (nth 3 ppss)
        (back-to-indentation)
        (let ((depth (car ppss)))
          (when (looking-at-p "[})]")
            (setq depth (1- depth)))
          (* planc-indent-offset (max depth 0)))))))

(defun planc-indent-line ()
  "Indent the current line as `planc fmt' would."
  (interactive)
  (let ((column (planc--indentation)))
    (if (null column)
        'noindent
      (if (<= (current-column) (current-indentation))
          (indent-line-to column)
        (save-excursion (indent-line-to column))))))

;;;; Formatting

(declare-function eglot-managed-p "eglot" ())
(declare-function eglot-format-buffer "eglot" ())
(declare-function lsp-format-buffer "lsp-mode" ())

(defun planc-format-buffer ()
  "Format the buffer in `planc fmt''s layout.
Through the language server when Eglot or lsp-mode manages the buffer,
and with `planc fmt -' otherwise.  A file with syntax errors is left as
it is, and the errors are shown."
  (interactive)
  (cond
   ((and (fboundp 'eglot-managed-p) (eglot-managed-p))
    (eglot-format-buffer))
   ((and (bound-and-true-p lsp-mode) (fboundp 'lsp-format-buffer))
    (lsp-format-buffer))
   (t (planc--format-with-cli))))

(defun planc--format-with-cli ()
  "Format the buffer with `planc fmt -', keeping point and marks."
  (let ((output (generate-new-buffer " *planc fmt*"))
        (errors (make-temp-file "planc-fmt-errors")))
    (unwind-protect
        (let* ((coding-system-for-read 'utf-8)
               (coding-system-for-write 'utf-8)
               (status (save-restriction
                         (widen)
                         (call-process-region
                          (point-min) (point-max) planc-executable nil
                          (list output errors) nil "fmt" "--color" "never" "-"))))
          (unless (eql status 0)
            (user-error "planc fmt: %s"
                        (with-temp-buffer
                          (insert-file-contents errors)
                          (string-trim (buffer-string)))))
          (unless (= 0 (compare-buffer-substrings nil nil nil output nil nil))
            (save-restriction
              (widen)
              (replace-buffer-contents output))))
      (kill-buffer output)
      (delete-file errors))))

;;;; The mode

(defvar planc-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-f") #'planc-format-buffer)
    map)
  "Keys of `planc-mode'.")

(defconst planc-imenu-generic-expression
  (mapcar (lambda (entry)
            (list (car entry)
                  (concat "^[ \t]*" (cadr entry) "[ \t]+\\(" planc--name "\\)")
                  1))
          '(("Templates" "template") ("Roles" "role") ("Parameters" "param")
            ("Steps" "step") ("Tasks" "task") (nil "plan")))
  "Imenu's index: the plan, its steps, tasks, roles, parameters, templates.")

;;;###autoload
(define-derived-mode planc-mode prog-mode "Plan"
  "Major mode for planc's `.plan' files.

Highlights keywords, the names of plans, steps, tasks, roles and
parameters, `after' references, strings with their escapes and
`{param}' interpolations, numbers and comments; indents by braces as
`planc fmt' does.  `planc lsp' is registered with Eglot and lsp-mode:
\\[eglot] (or `lsp') starts it.

\\{planc-mode-map}"
  :syntax-table planc-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-end "")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local syntax-propertize-function planc--syntax-propertize)
  (setq-local font-lock-defaults '(planc-font-lock-keywords))
  (setq-local indent-line-function #'planc-indent-line)
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width planc-indent-offset)
  (setq-local electric-indent-chars (append "{}" electric-indent-chars))
  (setq-local imenu-generic-expression planc-imenu-generic-expression))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.plan\\'" . planc-mode))

;;;; Language servers

(defvar eglot-server-programs)
(defvar lsp-language-id-configuration)
(declare-function lsp-register-client "lsp-mode" (client))
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode" (command &optional test-command))
(declare-function lsp-activate-on "lsp-mode" (&rest languages))

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((planc-mode :language-id "plan") . ,planc-lsp-command)))

(with-eval-after-load 'lsp-mode
  (add-to-list 'lsp-language-id-configuration '(planc-mode . "plan"))
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (lambda () planc-lsp-command))
    :activation-fn (lsp-activate-on "plan")
    :major-modes '(planc-mode)
    :server-id 'planc)))

(provide 'planc-mode)
;;; planc-mode.el ends here
