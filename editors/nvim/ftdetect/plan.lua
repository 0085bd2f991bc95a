-- `.plan` files are plans (planc).
if vim.filetype and vim.filetype.add then
  vim.filetype.add({ extension = { plan = "plan" } })
end
-- Neovim 0.7 detects filetypes with filetype.vim unless g:do_filetype_lua is
-- set, so say it the Vim way too (`setfiletype` never overrides).
vim.cmd("autocmd BufRead,BufNewFile *.plan setfiletype plan")
