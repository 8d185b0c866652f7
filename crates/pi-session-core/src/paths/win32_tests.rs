//! `path.win32` rules held to Node's answers. Every expected value below was printed by Node 20,
//! 22 and 26 (`path.win32`, `url.fileURLToPath(u, { windows: true })`, and the reference's
//! `normalizeWindowsShellPath`) for the same input; the three agree on all of them.

use super::win32;
use super::Style;

#[test]
fn windows_paths_normalize_as_node_path_win32_does() {
    for (input, node) in [
        ("", "."),
        (".", "."),
        ("/", "\\"),
        ("\\", "\\"),
        ("C:", "C:."),
        ("C:\\", "C:\\"),
        ("c:/x/../y/", "c:\\y\\"),
        ("C:x\\..\\..\\y", "C:..\\y"),
        ("\\\\server\\share", "\\\\server\\share\\"),
        ("\\\\server\\share\\", "\\\\server\\share\\"),
        ("//server/share/a/../b", "\\\\server\\share\\b"),
        ("\\\\.\\pipe\\x", "\\\\.\\pipe\\x"),
        ("\\\\?\\C:\\x\\..\\y", "\\\\?\\C:\\y"),
        ("a\\\\b//c\\", "a\\b\\c\\"),
        ("..\\..\\a", "..\\..\\a"),
        ("a/./b/.", "a\\b"),
        ("\\foo\\..\\..\\bar", "\\bar"),
        ("C:\\..", "C:\\"),
        ("x:y", "x:y"),
        ("a:b/c", "a:b\\c"),
        ("a\\b:", ".\\a\\b:"),
        ("\\\\server", "\\server"),
        ("\\\\server\\", "\\server\\"),
        ("C:\\Users\\ana\\proj\\", "C:\\Users\\ana\\proj\\"),
        ("D:/a//b", "D:\\a\\b"),
        ("CON:x", ".\\CON:x"),
        ("C:\\naïve\\ü", "C:\\naïve\\ü"),
    ] {
        assert_eq!(win32::normalize(input), node, "normalize({input:?})");
    }
}

#[test]
fn windows_paths_join_as_node_path_win32_does() {
    for (a, b, node) in [
        ("C:\\Users\\ana", ".pi/agent", "C:\\Users\\ana\\.pi\\agent"),
        ("C:\\a\\", "sessions", "C:\\a\\sessions"),
        ("", "f.jsonl", "f.jsonl"),
        (".", "", "."),
        ("", "", "."),
        ("//server", "share", "\\\\server\\share\\"),
        ("\\\\server\\share", "x", "\\\\server\\share\\x"),
        ("//", "x", "\\x"),
        ("///a", "b", "\\a\\b"),
        ("C:", "x", "C:\\x"),
        ("./custom", "f.jsonl", "custom\\f.jsonl"),
        ("x/../y", "f.jsonl", "y\\f.jsonl"),
        ("a", "..\\..\\b", "..\\b"),
        ("C:\\x", "D:\\y", "C:\\x\\D:\\y"),
        ("\\\\.\\pipe", "x", "\\\\.\\pipe\\x"),
    ] {
        assert_eq!(win32::join(&[a, b]), node, "join({a:?}, {b:?})");
        assert_eq!(Style::Win32.join(a, b), node);
    }
}

#[test]
fn a_windows_path_is_absolute_only_from_a_separator_or_a_drive_root() {
    for (input, node) in [
        ("", false),
        ("/", true),
        ("\\x", true),
        ("C:", false),
        ("C:\\", true),
        ("C:/", true),
        ("c:x", false),
        ("x", false),
        ("\\\\s\\h", true),
        ("1:\\x", false),
        (":\\", false),
    ] {
        assert_eq!(win32::is_absolute(input), node, "isAbsolute({input:?})");
    }
}

#[test]
fn windows_paths_resolve_against_a_windows_cwd_as_node_does() {
    // Node: path.win32.resolve("C:\\Users\\ana\\proj", input).
    for (input, node) in [
        ("", "C:\\Users\\ana\\proj"),
        (".", "C:\\Users\\ana\\proj"),
        ("..", "C:\\Users\\ana"),
        ("x\\y\\", "C:\\Users\\ana\\proj\\x\\y"),
        ("C:\\a\\..\\b\\", "C:\\b"),
        ("c:\\Users\\ANA", "c:\\Users\\ANA"),
        ("/rooted", "C:\\rooted"),
        ("\\\\server\\share\\x\\..", "\\\\server\\share\\"),
        ("\\\\server\\share", "\\\\server\\share\\"),
        ("C:rel\\x", "C:\\Users\\ana\\proj\\rel\\x"),
        ("//s/h/", "\\\\s\\h\\"),
        ("\\\\.\\pipe\\p", "\\\\.\\pipe\\p"),
        ("a/b/../../..", "C:\\Users\\ana"),
        ("\\\\?\\C:\\x", "\\\\?\\C:\\x"),
    ] {
        let got = win32::resolve("C:\\elsewhere", &["C:\\Users\\ana\\proj", input]);
        assert_eq!(got, node, "resolve({input:?})");
    }
}

#[test]
fn a_drive_relative_path_on_another_drive_resolves_against_that_drives_root() {
    // Node on Windows with its cwd on C: and no `=D:` variable (only cmd.exe sets them).
    assert_eq!(win32::resolve("C:\\Users\\ana", &["D:rel"]), "D:\\rel");
    assert_eq!(win32::resolve("C:\\Users\\ana", &["d:"]), "d:\\");
    assert_eq!(
        win32::resolve("C:\\Users\\ana", &["c:x"]),
        "c:\\Users\\ana\\x"
    );
}

#[test]
fn file_urls_read_as_windows_paths_as_node_reads_them() {
    for (url, node) in [
        ("file:///C:/x/y", Some("C:\\x\\y")),
        ("file:///c:/a%20b/%C3%BC", Some("c:\\a b\\ü")),
        ("file://server/share/x", Some("\\\\server\\share\\x")),
        ("file://localhost/C:/x", Some("C:\\x")),
        ("file:///C|/x", Some("C:\\x")),
        ("file:///x/y", None),
        ("file:///C:/a%2Fb", None),
    ] {
        assert_eq!(win32::file_url_to_path(url).as_deref(), node, "{url}");
    }
}

#[test]
fn shell_drive_paths_read_as_the_reference_reads_them_on_windows() {
    for (input, reference) in [
        ("/c/Users/ana", "C:\\Users\\ana"),
        ("/mnt/d/x/y", "D:\\x\\y"),
        ("/cygdrive/e", "E:\\"),
        ("/c", "C:\\"),
        ("/cc/x", "/cc/x"),
        ("//c/x", "//c/x"),
        ("/c\\x", "/c\\x"),
        ("C:\\x", "C:\\x"),
        ("/mnt/c", "C:\\"),
        ("/tmp/x", "/tmp/x"),
        ("/x/", "X:\\"),
    ] {
        assert_eq!(win32::from_shell_path(input), reference, "{input:?}");
    }
}

#[test]
fn a_windows_cwd_gives_the_session_dir_the_agent_computes_there() {
    let home = "C:\\Users\\ana";
    let w = Style::Win32;
    let cwd = w.resolve_input("C:\\Windows", "C:/Users/ana/proj/", home);
    assert_eq!(cwd, "C:\\Users\\ana\\proj");
    assert_eq!(super::encode_cwd(&cwd), "--C--Users-ana-proj--");
    let unc = w.resolve_input("C:\\x", "\\\\srv\\share\\p", home);
    assert_eq!(super::encode_cwd(&unc), "---srv-share-p--");
    assert_eq!(w.expand("~", home), home);
    assert_eq!(
        w.expand("~\\.pi\\agent", home),
        "C:\\Users\\ana\\.pi\\agent"
    );
    assert_eq!(w.expand("~/x", home), "C:\\Users\\ana\\x");
    assert_eq!(w.expand("/c/Users/ana", home), "C:\\Users\\ana");
    assert_eq!(w.expand("file:///C:/a%20b", home), "C:\\a b");
    assert_eq!(Style::Posix.expand("~\\x", "/h"), "~\\x");
    assert!(w.same("C:\\Users\\Ana", "c:\\users\\ana"));
    assert!(!Style::Posix.same("/Users/Ana", "/users/ana"));
}
