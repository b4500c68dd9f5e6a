// The POSIX names the Windows C runtime lacks (Sources/NotOnWindows), seen by every file that imports WindowsShims in
// place of WinSDK: a POSIX call in a Windows file is then ambiguous here, as it is missing on Windows.
@_exported import NotOnWindows
