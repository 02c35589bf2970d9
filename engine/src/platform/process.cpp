#include "vkamp/platform/process.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>

#include "vkamp/platform.hpp"
#ifdef _WIN32
#include <thread>

#include "wide.hpp"
#else
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace vkamp::platform {
namespace {

#ifdef _WIN32
// One argument quoted the way the C runtime's command-line parser splits
// it back (backslashes doubled only before a quote).
void append_quoted(std::wstring& line, const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  size_t backslashes = 0;
  for (wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    if (c == L'"') line.append(backslashes * 2 + 1, L'\\');
    else line.append(backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(backslashes * 2, L'\\');
  line += L'"';
}

// This process's environment with the spec's changes, as CreateProcessW's block.
std::wstring environment_block(const ChildSpec& spec) {
  std::vector<std::wstring> vars;
  wchar_t* env = GetEnvironmentStringsW();
  for (const wchar_t* p = env; *p; p += wcslen(p) + 1) vars.emplace_back(p);
  FreeEnvironmentStringsW(env);
  for (const auto& [name, value] : spec.env) {
    const std::wstring key = widen(name) + L"=";
    std::erase_if(vars, [&](const std::wstring& v) { return _wcsnicmp(v.c_str(), key.c_str(), key.size()) == 0; });
    if (value) vars.push_back(key + widen(*value));
  }
  std::wstring block;
  for (const auto& v : vars) block += v + L'\0';
  block += L'\0';
  return block;
}

HANDLE inheritable_file(const std::string& path, bool write) {
  SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
  return CreateFileW(widen(path).c_str(), write ? GENERIC_WRITE : GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                     &sa, write ? CREATE_ALWAYS : OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
}
#endif

}  // namespace

ChildOutcome run_process(const ChildSpec& spec) {
  ChildOutcome out;
  if (spec.argv.empty()) return out;
#ifdef _WIN32
  SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &sa, 0)) return out;
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  HANDLE in = inheritable_file(spec.stdin_path.empty() ? null_device() : spec.stdin_path, false);
  HANDLE err = spec.stderr_to_parent      ? GetStdHandle(STD_ERROR_HANDLE)
               : spec.stderr_path.empty() ? write_end
                                          : inheritable_file(spec.stderr_path, true);
  STARTUPINFOW si{};
  si.cb = sizeof(si);
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = in;
  si.hStdOutput = write_end;
  si.hStdError = err;
  std::wstring line;
  for (const auto& a : spec.argv) {
    if (!line.empty()) line += L' ';
    append_quoted(line, widen(a));
  }
  std::wstring env = environment_block(spec);
  PROCESS_INFORMATION pi{};
  const BOOL started = CreateProcessW(nullptr, line.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT,
                                      env.data(), nullptr, &si, &pi);
  CloseHandle(write_end);
  if (in != INVALID_HANDLE_VALUE) CloseHandle(in);
  if (!spec.stderr_to_parent && err != write_end && err != INVALID_HANDLE_VALUE) CloseHandle(err);
  if (!started) {
    CloseHandle(read_end);
    out.output = "cannot start " + spec.argv[0] + ": " + error_text(GetLastError()) + "\n";
    return out;
  }
  std::thread reader([&] {
    char buf[4096];
    DWORD n = 0;
    while (ReadFile(read_end, buf, sizeof(buf), &n, nullptr) && n > 0) out.output.append(buf, n);
  });
  const DWORD wait_ms = spec.timeout_s > 0 ? DWORD(spec.timeout_s) * 1000 : INFINITE;
  bool timed_out = WaitForSingleObject(pi.hProcess, wait_ms) == WAIT_TIMEOUT;
  if (timed_out) {
    TerminateProcess(pi.hProcess, 124);
    WaitForSingleObject(pi.hProcess, INFINITE);
  }
  reader.join();
  DWORD code = 0;
  GetExitCodeProcess(pi.hProcess, &code);
  out.status = timed_out ? 124 : int(code);
  CloseHandle(pi.hProcess);
  CloseHandle(pi.hThread);
  CloseHandle(read_end);
#else
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return out;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    // The child: only async-signal-safe work from here, but for the
    // environment changes, which this process alone sees.
    for (const auto& [name, value] : spec.env) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
    int in = open(spec.stdin_path.empty() ? null_device() : spec.stdin_path.c_str(), O_RDONLY);
    if (in < 0) {
      dprintf(fds[1], "cannot open %s as standard input\n", spec.stdin_path.c_str());
      _exit(127);
    }
    dup2(in, 0);
    dup2(fds[1], 1);
    if (spec.stderr_to_parent) {
      // stderr stays this process's
    } else if (spec.stderr_path.empty()) {
      dup2(fds[1], 2);
    } else {
      int err = open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err >= 0 ? err : fds[1], 2);
    }
    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    dprintf(2, "cannot start %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(spec.timeout_s);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    int wait_ms = -1;
    if (spec.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = int(std::max<long long>(0, left.count()));
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.output.append(buf, size_t(n));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  out.status = timed_out ? 124 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
#endif
  return out;
}

}  // namespace vkamp::platform
