-- The planc language server for Neovim: starts `planc lsp` for every buffer
-- of filetype `plan`, and for the JSON plan documents it checks as
-- `planc check` does (`*.plan.json`, task-master's
-- `.taskmaster/tasks/tasks.json`).
--
--   require("planc").setup()                                  -- defaults
--   require("planc").setup({ cmd = { "/path/to/planc", "lsp" } })
--
-- Works with Neovim 0.7 (Debian 12) and later: `vim.lsp.start` where it
-- exists (0.8+), `vim.lsp.start_client` before that.

local M = {}

M.defaults = {
  cmd = { "planc", "lsp" },
  name = "planc",
}

local function root_dir(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  local found = vim.fs and vim.fs.find and vim.fs.find(".git", {
    path = vim.fs.dirname(path),
    upward = true,
  })[1]
  if found then
    return vim.fs.dirname(found)
  end
  return vim.fn.getcwd()
end

local client_id = nil

--- Starts (or reuses) the server and attaches it to `bufnr`.
function M.attach(bufnr, opts)
  local config = {
    name = opts.name,
    cmd = opts.cmd,
    root_dir = root_dir(bufnr),
  }
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client(config)
  end
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  return client_id
end

--- Whether a buffer's file is a JSON plan document the server checks.
function M.is_plan_json(name)
  return name:match("%.plan%.json$") ~= nil
    or name:match("%.taskmaster/tasks/tasks%.json$") ~= nil
end

--- Starts planc's language server for `plan` buffers and JSON plan documents.
function M.setup(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  local group = vim.api.nvim_create_augroup("planc", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "plan", "json" },
    callback = function(args)
      local name = vim.api.nvim_buf_get_name(args.buf)
      if vim.bo[args.buf].filetype == "plan" or M.is_plan_json(name) then
        M.attach(args.buf, opts)
      end
    end,
  })
end

return M
