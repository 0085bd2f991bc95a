-- Opens test/broken.plan with planc's Neovim setup and checks the
-- diagnostics `planc lsp` publishes. Run by test/run.sh.

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local root = vim.fn.fnamemodify(here, ":h")
vim.opt.runtimepath:prepend(root)
-- The runtimepath changed after startup, so load the plugin's files the way
-- a plugin manager would have at startup.
vim.cmd("filetype plugin on")
vim.cmd("runtime! ftdetect/plan.lua")

local cmd = vim.split(os.getenv("PLANC_LSP_CMD") or "planc lsp", " ", { trimempty = true })
require("planc").setup({ cmd = cmd })

local function fail(message)
  io.stderr:write("FAIL: " .. message .. "\n")
  vim.cmd("cquit 1")
end

vim.cmd("edit " .. vim.fn.fnameescape(here .. "/broken.plan"))
if vim.bo.filetype ~= "plan" then
  fail("filetype is '" .. vim.bo.filetype .. "', not 'plan'")
end

local ok = vim.wait(20000, function()
  return #vim.diagnostic.get(0) >= 2
end, 50)
if not ok then
  fail("no diagnostics from planc lsp within 20 s (got " .. #vim.diagnostic.get(0) .. ")")
end

local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local severity = d.severity == vim.diagnostic.severity.ERROR and "error" or "warning"
  table.insert(found, string.format("%d:%d %s %s %s", d.lnum, d.col, severity, d.code or "?", d.message:match("^[^\n]*")))
end
table.sort(found)
-- `writer` is not reported unused: the misspelt `writr` means it.
local expected = {
  "3:37 error planc::unknown_role no role named `writr`",
  "4:36 error planc::unknown_ref no task or step named `draf`",
}
if vim.inspect(found) ~= vim.inspect(expected) then
  fail("diagnostics differ:\n got " .. vim.inspect(found) .. "\n want " .. vim.inspect(expected))
end
print("3 passed, 0 failed")
vim.cmd("qall!")
