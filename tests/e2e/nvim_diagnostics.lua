-- Headless Neovim as an exportlens client: start the server through Neovim's own LSP
-- client, open one file, wait for exportlens's verdict on it, write what Neovim shows.
--
-- Written for Neovim 0.7 (Debian's 0.7.2: no vim.lsp.start, no `nvim -l`), and works on
-- later versions. Driven by tests/e2e/test_neovim.py through environment variables:
--
--   EXPORTLENS_NVIM_CMD      the server command, a JSON list ("exportlens", "serve")
--   EXPORTLENS_NVIM_ROOT     the workspace folder (holds pyproject.toml)
--   EXPORTLENS_NVIM_FILE     the file to open, relative to the root
--   EXPORTLENS_NVIM_CODE     the diagnostic code to wait for (e.g. EL101)
--   EXPORTLENS_NVIM_TIMEOUT  how long to wait for it, in ms
--   EXPORTLENS_NVIM_OUT      where to write the result, one JSON object
--   EXPORTLENS_NVIM_QUIT_ON  optional: instead, quit Neovim (`:qall!`, as a user does) as soon
--                            as a server log line contains this text, e.g. "exporting "
--
--   nvim --headless --clean -n -c "luafile tests/e2e/nvim_diagnostics.lua" </dev/null
--
-- The result: {diagnostics = [{lnum, col, end_lnum, end_col, severity, code, source,
-- message}] (0-based, as Neovim stores them), status = exportlens/status's answer,
-- logs = the server's window/logMessage lines, waited_ms, found, exit = {code, signal}
-- of the server after Neovim stopped it}. Neovim quits with 0 once the result is
-- written, whatever it holds: the test judges it.

local env = vim.env
local cmd = vim.fn.json_decode(env.EXPORTLENS_NVIM_CMD)
local root = env.EXPORTLENS_NVIM_ROOT
local file = root .. '/' .. env.EXPORTLENS_NVIM_FILE
local want = env.EXPORTLENS_NVIM_CODE
local timeout = tonumber(env.EXPORTLENS_NVIM_TIMEOUT or '60000')
local out_path = env.EXPORTLENS_NVIM_OUT

local result = { diagnostics = {}, logs = {}, found = false }

local function write_result()
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
end

-- Anything that goes wrong below still leaves a result behind, and Neovim never waits
-- at a prompt: headless Neovim with an error would otherwise sit until killed.
local function fail(why)
  result.error = why
  pcall(write_result)
  vim.cmd('qall!')
end

local exited = nil
local client_id = vim.lsp.start_client({
  name = 'exportlens',
  cmd = cmd,
  cmd_cwd = root,
  root_dir = root,
  handlers = {
    ['window/logMessage'] = function(_, params)
      table.insert(result.logs, params.message)
    end,
    ['window/showMessage'] = function(_, params)
      table.insert(result.logs, 'showMessage: ' .. params.message)
    end,
  },
  on_exit = function(code, signal)
    exited = { code = code, signal = signal }
  end,
})
if not client_id then
  return fail('vim.lsp.start_client returned nil')
end

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)

local function exportlens_diagnostics()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.source == 'exportlens' then
      table.insert(found, d)
    end
  end
  return found
end

local function has_code()
  for _, d in ipairs(exportlens_diagnostics()) do
    if d.code == want then
      return true
    end
  end
  return false
end

local quit_on = env.EXPORTLENS_NVIM_QUIT_ON
if quit_on and quit_on ~= '' then
  -- Quit in the middle of things: Neovim's exit handler sends shutdown and exit, waits
  -- 500 ms, then sends SIGTERM. Whatever the server started must go with it.
  local seen = vim.wait(timeout, function()
    for _, line in ipairs(result.logs) do
      if line:find(quit_on, 1, true) then
        return true
      end
    end
    return false
  end, 20)
  result.found = seen
  if not seen then
    result.error = 'no server log line contains ' .. quit_on
  end
  local client = vim.lsp.get_client_by_id(client_id)
  local reply, err = nil, 'no client'
  if client then
    reply, err = client.request_sync('exportlens/status', vim.empty_dict(), 5000, buf)
  end
  result.status = reply and reply.result or vim.NIL
  result.status_error = (reply and reply.err and reply.err.message) or err or vim.NIL
  write_result()
  vim.cmd('qall!')
  return
end

-- Done when the wanted code is shown, or when the export has landed (its log line comes
-- just before its publish) and a moment has passed: a wrong verdict ends the wait too.
local landed_at = nil
local started = vim.loop.now()
local ok = vim.wait(timeout, function()
  if has_code() then
    return true
  end
  if not landed_at then
    for _, line in ipairs(result.logs) do
      if line:find(': exported in ', 1, true) or line:find(': failed in ', 1, true) then
        landed_at = vim.loop.now()
      end
    end
  end
  return landed_at ~= nil and vim.loop.now() - landed_at > 2000
end, 50)
result.waited_ms = vim.loop.now() - started
result.found = has_code()
if not ok then
  result.error = 'timed out waiting for ' .. want
end

for _, d in ipairs(exportlens_diagnostics()) do
  table.insert(result.diagnostics, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = vim.diagnostic.severity[d.severity], code = d.code, source = d.source, message = d.message,
  })
  io.stdout:write(string.format('%s:%d:%d: %s %s %s\n', env.EXPORTLENS_NVIM_FILE, d.lnum + 1, d.col + 1,
    vim.diagnostic.severity[d.severity], tostring(d.code), d.message))
end

local client = vim.lsp.get_client_by_id(client_id)
if client then
  local reply, err = client.request_sync('exportlens/status', vim.empty_dict(), 5000, buf)
  result.status = reply and reply.result or vim.NIL
  result.status_error = (reply and reply.err and reply.err.message) or err or vim.NIL
end

-- Stop the server the way Neovim does (shutdown, then exit) and wait for it to go.
vim.lsp.stop_client(client_id)
vim.wait(10000, function() return exited ~= nil end, 50)
result.exit = exited or vim.NIL
write_result()
vim.cmd('qall!')
