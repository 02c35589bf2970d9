@echo off
rem Runs vkamp's GPU tests from the unpacked Windows package on this
rem machine's Vulkan device (scripts/package-windows.sh puts it there).
rem
rem   run-tests.cmd [FILTER]
rem
rem FILTER is a GoogleTest filter, e.g. Shaders/Gemm.* or *fp16 (default:
rem every test but the Large/ ones, real models' largest sizes, minutes
rem each on a CPU driver; Large/* runs them). tests\tests.list names the test programs, one a line. Each
rem runs under the Khronos validation layer where the Vulkan SDK installed
rem it (then any message it prints fails a test), else without it, saying
rem so. VKAMP_DEVICE picks the device (an index or a name, as vkamp-info
rem lists them). Logs go to %TEMP%\vkamp-tests\logs. Ends with the line
rem "N passed, N failed"; exits 1 if any test failed, 2 if none matched.
rem Plain batch, no delayed expansion: a "!" in the folder's name stays.
setlocal EnableExtensions
set "pkg=%~dp0"
set "filter=%~1"
if "%filter%"=="" set "filter=*-Large/*"
set "work=%TEMP%\vkamp-tests"
set "logs=%work%\logs"
if exist "%logs%" rmdir /s /q "%logs%"
mkdir "%logs%" 2>nul
if not exist "%logs%" (
  echo run-tests: cannot make the log folder %logs%
  exit /b 1
)
rem The tests' compiled pipelines stay out of the user's cache, and are kept
rem between runs of this script (the first run compiles them all).
set "VKAMP_PIPELINE_CACHE=%work%\pipeline-cache.bin"
rem The tests' data, beside them; read as UTF-8 paths, so any folder name works.
set "VKAMP_GOLDEN_DIR=%pkg%tests\data\golden"

echo vkamp Windows package test run, started at %time%
rem The devices, straight to the console (under Wine a process it starts
rem may hold a file it wrote to open a while).
"%pkg%vkamp-info.exe"
if errorlevel 1 goto no_device
"%pkg%vkamp-info.exe" --validation >nul 2>&1
if errorlevel 1 goto no_layer
echo The tests run under the Khronos validation layer: a message from it fails the test.
goto run
:no_layer
echo No Khronos validation layer here (the Vulkan SDK installs it, https://vulkan.lunarg.com):
echo the tests run without it.
set "VKAMP_TEST_VALIDATION=0"

:run
set passed=0
set failed=0
set skipped=0
for /f "usebackq eol=# tokens=1" %%t in ("%pkg%tests\tests.list") do call :run_one %%t
echo.
set /a ran=passed+failed+skipped
if %ran%==0 goto none_matched
if %failed% gtr 0 (
  echo Failed ^(logs in %logs%^):
  type "%logs%\failed.txt"
)
echo %passed% passed, %failed% failed
if %failed% gtr 0 exit /b 1
exit /b 0

:none_matched
echo run-tests: no test matches %filter%
echo 0 passed, 0 failed
exit /b 2

:no_device
echo run-tests: vkamp-info failed ^(no Vulkan driver, or no device for VKAMP_DEVICE^): no test ran
echo 0 passed, 1 failed
exit /b 1

rem Runs one test program with the filter and adds up what GoogleTest
rem printed: "[  PASSED  ] N tests." and "[  FAILED  ] N tests, listed below:".
rem A program that printed no summary (it crashed) counts as one failure, and
rem so does one that failed after every test passed (validation messages at
rem device destruction).
:run_one
set "log=%logs%\%~n1.log"
"%pkg%tests\%1" "--gtest_filter=%filter%" >"%log%" 2>&1
set rc=%errorlevel%
type "%log%" | find "no test matches the filter" >nul
if not errorlevel 1 (
  echo %~n1: no test matches %filter%
  goto :eof
)
set p=
set f=0
set s=0
for /f "tokens=4" %%n in ('type "%log%" ^| find "[  PASSED  ]"') do set p=%%n
for /f "tokens=4" %%n in ('type "%log%" ^| find "[  FAILED  ]" ^| find "listed below"') do set f=%%n
for /f "tokens=4" %%n in ('type "%log%" ^| find "[  SKIPPED ]" ^| find "listed below"') do set s=%%n
if "%p%"=="" (
  set p=0
  set f=1
  echo %1: exit status %rc% before it printed a summary>>"%logs%\failed.txt"
) else if %f% gtr 0 (
  type "%log%" | find "[  FAILED  ]" | find "ms)" >>"%logs%\failed.txt"
) else if not "%rc%"=="0" (
  set f=1
  echo %1: exit status %rc% after every test passed>>"%logs%\failed.txt"
)
set /a passed+=p
set /a failed+=f
set /a skipped+=s
echo %~n1: %p% passed, %f% failed, %s% skipped ^(done at %time%^)
goto :eof
