//! Tests of the Win32 to libuv mapping (`win32.rs`), run on every platform.
use super::*;
use std::collections::HashMap;
use std::path::PathBuf;

#[test]
fn node_numbers_of_the_errors_a_session_store_meets() {
    // libuv's numbers on Windows (uv/errno.h), as Node for Windows' getSystemErrorMap()
    // lists them.
    let expected = [
        ("ENOENT", -4058),
        ("EEXIST", -4075),
        ("ENOTDIR", -4052),
        ("EISDIR", -4068),
        ("EACCES", -4092),
        ("EPERM", -4048),
        ("ENAMETOOLONG", -4064),
        ("EBUSY", -4082),
        ("ENOTEMPTY", -4051),
        ("EMFILE", -4066),
        ("ENOSPC", -4055),
        ("EINVAL", -4071),
        ("EIO", -4070),
        ("EXDEV", -4037),
        ("UNKNOWN", -4094),
        ("EOF", -4095),
    ];
    for (name, errno) in expected {
        let e = ALL.iter().find(|e| e.name == name).unwrap();
        assert_eq!(e.errno, errno, "{name}");
    }
}

#[test]
fn every_name_and_number_is_distinct_and_in_libuvs_range() {
    for (i, a) in ALL.iter().enumerate() {
        assert!((-4095..=-4000).contains(&a.errno), "{}", a.name);
        assert!(a.name == "EOF" || a.name == "UNKNOWN" || a.name.starts_with('E'));
        assert!(!a.description.is_empty());
        for b in &ALL[i + 1..] {
            assert_ne!(a.name, b.name);
            assert_ne!(a.errno, b.errno, "{} and {}", a.name, b.name);
        }
    }
}

#[test]
fn win32_codes_translate_as_libuv_does() {
    use code::*;
    let cases = [
        (ERROR_FILE_NOT_FOUND, "ENOENT"),
        (ERROR_PATH_NOT_FOUND, "ENOENT"),
        (ERROR_INVALID_NAME, "ENOENT"),
        (ERROR_BAD_PATHNAME, "ENOENT"),
        (ERROR_DIRECTORY, "ENOENT"),
        (ERROR_ALREADY_EXISTS, "EEXIST"),
        (ERROR_FILE_EXISTS, "EEXIST"),
        // Access denied is EPERM in libuv (and so in Node on Windows), not EACCES.
        (ERROR_ACCESS_DENIED, "EPERM"),
        (ERROR_PRIVILEGE_NOT_HELD, "EPERM"),
        (ERROR_CANT_ACCESS_FILE, "EACCES"),
        (ERROR_ELEVATION_REQUIRED, "EACCES"),
        (ERROR_SHARING_VIOLATION, "EBUSY"),
        (ERROR_LOCK_VIOLATION, "EBUSY"),
        (ERROR_DIR_NOT_EMPTY, "ENOTEMPTY"),
        (ERROR_TOO_MANY_OPEN_FILES, "EMFILE"),
        (ERROR_DISK_FULL, "ENOSPC"),
        (ERROR_HANDLE_DISK_FULL, "ENOSPC"),
        (ERROR_FILENAME_EXCED_RANGE, "ENAMETOOLONG"),
        (ERROR_INVALID_FUNCTION, "EISDIR"),
        (ERROR_NOT_SAME_DEVICE, "EXDEV"),
        (ERROR_WRITE_PROTECT, "EROFS"),
        (ERROR_INVALID_HANDLE, "EBADF"),
        (ERROR_INVALID_PARAMETER, "EINVAL"),
        (ERROR_CRC, "EIO"),
        (ERROR_CANT_RESOLVE_FILENAME, "ELOOP"),
        (ERROR_NOT_ENOUGH_MEMORY, "ENOMEM"),
        (ERROR_BROKEN_PIPE, "EOF"),
        (ERROR_NOT_SUPPORTED, "ENOTSUP"),
        (0, "UNKNOWN"),
        (999_999, "UNKNOWN"),
    ];
    for (win32, name) in cases {
        assert_eq!(translate(win32).name, name, "Win32 error {win32}");
    }
}

/// A file system of the named paths (every other path absent).
fn fs(entries: &[(&str, PathKind)]) -> impl Fn(&Path) -> PathKind {
    let map: HashMap<PathBuf, PathKind> = entries
        .iter()
        .map(|(p, k)| (PathBuf::from(p), *k))
        .collect();
    move |p: &Path| map.get(p).copied().unwrap_or(PathKind::Absent)
}

#[test]
fn mkdir_below_a_file_is_enotdir_as_nodes_recursive_mkdir_says() {
    use code::*;
    let tree = fs(&[("/t", PathKind::Dir), ("/t/file", PathKind::NotDir)]);
    // What std's create_dir_all on Windows ends in: the file's own name exists.
    for win32 in [ERROR_ALREADY_EXISTS, ERROR_PATH_NOT_FOUND] {
        assert_eq!(
            for_call(win32, "mkdir", Path::new("/t/file/sessions"), &tree),
            ENOTDIR
        );
        assert_eq!(
            for_call(win32, "mkdir", Path::new("/t/file/a/b"), &tree),
            ENOTDIR
        );
    }
    // The path itself a file: EEXIST, as Node's recursive mkdir says too.
    assert_eq!(
        for_call(ERROR_ALREADY_EXISTS, "mkdir", Path::new("/t/file"), &tree),
        EEXIST
    );
    // Above it only directories (or nothing): the plain translation.
    assert_eq!(
        for_call(ERROR_PATH_NOT_FOUND, "mkdir", Path::new("/t/a/b"), &tree),
        ENOENT
    );
    assert_eq!(
        for_call(ERROR_PATH_NOT_FOUND, "mkdir", Path::new("/u/a"), &tree),
        ENOENT
    );
    assert_eq!(
        for_call(
            ERROR_FILENAME_EXCED_RANGE,
            "mkdir",
            Path::new("/t/file/x"),
            &tree
        ),
        ENAMETOOLONG
    );
    // libuv's mkdir: an invalid name is EINVAL.
    assert_eq!(
        for_call(ERROR_INVALID_NAME, "mkdir", Path::new("/t/a?"), &tree),
        EINVAL
    );
    // Other calls below a file keep the translation (Node's open there says ENOENT).
    assert_eq!(
        for_call(ERROR_PATH_NOT_FOUND, "open", Path::new("/t/file/x"), &tree),
        ENOENT
    );
}

#[test]
fn opening_or_reading_a_directory_is_eisdir_as_nodes_read_says() {
    use code::*;
    let tree = fs(&[("/t", PathKind::Dir), ("/t/file", PathKind::NotDir)]);
    assert_eq!(
        for_call(ERROR_ACCESS_DENIED, "open", Path::new("/t"), &tree),
        EISDIR
    );
    assert_eq!(
        for_call(ERROR_ACCESS_DENIED, "read", Path::new("/t"), &tree),
        EISDIR
    );
    // A file that is refused stays EPERM, as in Node; so does a rename onto a directory.
    assert_eq!(
        for_call(ERROR_ACCESS_DENIED, "open", Path::new("/t/file"), &tree),
        EPERM
    );
    assert_eq!(
        for_call(ERROR_ACCESS_DENIED, "rename", Path::new("/t"), &tree),
        EPERM
    );
    // A read on a directory handle says so itself.
    assert_eq!(
        for_call(ERROR_INVALID_FUNCTION, "read", Path::new("/t"), &tree),
        EISDIR
    );
}

#[test]
fn the_file_system_is_asked_only_for_a_correction() {
    let asked = std::cell::Cell::new(0);
    let counting = |_: &Path| {
        asked.set(asked.get() + 1);
        PathKind::Absent
    };
    for_call(
        code::ERROR_FILE_NOT_FOUND,
        "open",
        Path::new("/x"),
        counting,
    );
    for_call(
        code::ERROR_SHARING_VIOLATION,
        "rename",
        Path::new("/x"),
        counting,
    );
    assert_eq!(asked.get(), 0);
}

/// The numbers of [`code`] are the Win32 ones (run where `windows-sys` is a dependency).
#[cfg(windows)]
#[test]
fn win32_codes_match_windows_sys() {
    // long: one table, a pair per code the mapping names.
    use windows_sys::Win32::Foundation as f;
    let pairs = [
        (code::ERROR_INVALID_FUNCTION, f::ERROR_INVALID_FUNCTION),
        (code::ERROR_FILE_NOT_FOUND, f::ERROR_FILE_NOT_FOUND),
        (code::ERROR_PATH_NOT_FOUND, f::ERROR_PATH_NOT_FOUND),
        (
            code::ERROR_TOO_MANY_OPEN_FILES,
            f::ERROR_TOO_MANY_OPEN_FILES,
        ),
        (code::ERROR_ACCESS_DENIED, f::ERROR_ACCESS_DENIED),
        (code::ERROR_INVALID_HANDLE, f::ERROR_INVALID_HANDLE),
        (code::ERROR_NOT_ENOUGH_MEMORY, f::ERROR_NOT_ENOUGH_MEMORY),
        (code::ERROR_INVALID_DATA, f::ERROR_INVALID_DATA),
        (code::ERROR_OUTOFMEMORY, f::ERROR_OUTOFMEMORY),
        (code::ERROR_INVALID_DRIVE, f::ERROR_INVALID_DRIVE),
        (code::ERROR_NOT_SAME_DEVICE, f::ERROR_NOT_SAME_DEVICE),
        (code::ERROR_WRITE_PROTECT, f::ERROR_WRITE_PROTECT),
        (code::ERROR_CRC, f::ERROR_CRC),
        (code::ERROR_GEN_FAILURE, f::ERROR_GEN_FAILURE),
        (code::ERROR_SHARING_VIOLATION, f::ERROR_SHARING_VIOLATION),
        (code::ERROR_LOCK_VIOLATION, f::ERROR_LOCK_VIOLATION),
        (code::ERROR_HANDLE_DISK_FULL, f::ERROR_HANDLE_DISK_FULL),
        (code::ERROR_NOT_SUPPORTED, f::ERROR_NOT_SUPPORTED),
        (code::ERROR_NETNAME_DELETED, f::ERROR_NETNAME_DELETED),
        (code::ERROR_FILE_EXISTS, f::ERROR_FILE_EXISTS),
        (code::ERROR_CANNOT_MAKE, f::ERROR_CANNOT_MAKE),
        (code::ERROR_INVALID_PARAMETER, f::ERROR_INVALID_PARAMETER),
        (code::ERROR_BROKEN_PIPE, f::ERROR_BROKEN_PIPE),
        (code::ERROR_OPEN_FAILED, f::ERROR_OPEN_FAILED),
        (code::ERROR_BUFFER_OVERFLOW, f::ERROR_BUFFER_OVERFLOW),
        (code::ERROR_DISK_FULL, f::ERROR_DISK_FULL),
        (code::ERROR_SEM_TIMEOUT, f::ERROR_SEM_TIMEOUT),
        (
            code::ERROR_INSUFFICIENT_BUFFER,
            f::ERROR_INSUFFICIENT_BUFFER,
        ),
        (code::ERROR_INVALID_NAME, f::ERROR_INVALID_NAME),
        (code::ERROR_MOD_NOT_FOUND, f::ERROR_MOD_NOT_FOUND),
        (code::ERROR_DIR_NOT_EMPTY, f::ERROR_DIR_NOT_EMPTY),
        (code::ERROR_SIGNAL_REFUSED, f::ERROR_SIGNAL_REFUSED),
        (code::ERROR_BAD_PATHNAME, f::ERROR_BAD_PATHNAME),
        (code::ERROR_ALREADY_EXISTS, f::ERROR_ALREADY_EXISTS),
        (code::ERROR_BAD_EXE_FORMAT, f::ERROR_BAD_EXE_FORMAT),
        (code::ERROR_ENVVAR_NOT_FOUND, f::ERROR_ENVVAR_NOT_FOUND),
        (code::ERROR_NO_SIGNAL_SENT, f::ERROR_NO_SIGNAL_SENT),
        (
            code::ERROR_FILENAME_EXCED_RANGE,
            f::ERROR_FILENAME_EXCED_RANGE,
        ),
        (
            code::ERROR_META_EXPANSION_TOO_LONG,
            f::ERROR_META_EXPANSION_TOO_LONG,
        ),
        (code::ERROR_BAD_PIPE, f::ERROR_BAD_PIPE),
        (code::ERROR_PIPE_BUSY, f::ERROR_PIPE_BUSY),
        (code::ERROR_NO_DATA, f::ERROR_NO_DATA),
        (code::ERROR_PIPE_NOT_CONNECTED, f::ERROR_PIPE_NOT_CONNECTED),
        (code::ERROR_DIRECTORY, f::ERROR_DIRECTORY),
        (code::ERROR_EA_TABLE_FULL, f::ERROR_EA_TABLE_FULL),
        (code::ERROR_ELEVATION_REQUIRED, f::ERROR_ELEVATION_REQUIRED),
        (code::ERROR_OPERATION_ABORTED, f::ERROR_OPERATION_ABORTED),
        (code::ERROR_NOACCESS, f::ERROR_NOACCESS),
        (code::ERROR_INVALID_FLAGS, f::ERROR_INVALID_FLAGS),
        (code::ERROR_END_OF_MEDIA, f::ERROR_END_OF_MEDIA),
        (code::ERROR_FILEMARK_DETECTED, f::ERROR_FILEMARK_DETECTED),
        (code::ERROR_BEGINNING_OF_MEDIA, f::ERROR_BEGINNING_OF_MEDIA),
        (code::ERROR_SETMARK_DETECTED, f::ERROR_SETMARK_DETECTED),
        (code::ERROR_NO_DATA_DETECTED, f::ERROR_NO_DATA_DETECTED),
        (
            code::ERROR_INVALID_BLOCK_LENGTH,
            f::ERROR_INVALID_BLOCK_LENGTH,
        ),
        (code::ERROR_BUS_RESET, f::ERROR_BUS_RESET),
        (
            code::ERROR_NO_UNICODE_TRANSLATION,
            f::ERROR_NO_UNICODE_TRANSLATION,
        ),
        (code::ERROR_IO_DEVICE, f::ERROR_IO_DEVICE),
        (code::ERROR_EOM_OVERFLOW, f::ERROR_EOM_OVERFLOW),
        (
            code::ERROR_DEVICE_REQUIRES_CLEANING,
            f::ERROR_DEVICE_REQUIRES_CLEANING,
        ),
        (code::ERROR_DEVICE_DOOR_OPEN, f::ERROR_DEVICE_DOOR_OPEN),
        (code::ERROR_CONNECTION_REFUSED, f::ERROR_CONNECTION_REFUSED),
        (
            code::ERROR_ADDRESS_ALREADY_ASSOCIATED,
            f::ERROR_ADDRESS_ALREADY_ASSOCIATED,
        ),
        (
            code::ERROR_NETWORK_UNREACHABLE,
            f::ERROR_NETWORK_UNREACHABLE,
        ),
        (code::ERROR_HOST_UNREACHABLE, f::ERROR_HOST_UNREACHABLE),
        (code::ERROR_CONNECTION_ABORTED, f::ERROR_CONNECTION_ABORTED),
        (code::ERROR_PRIVILEGE_NOT_HELD, f::ERROR_PRIVILEGE_NOT_HELD),
        (code::ERROR_DISK_CORRUPT, f::ERROR_DISK_CORRUPT),
        (
            code::ERROR_SYMLINK_NOT_SUPPORTED,
            f::ERROR_SYMLINK_NOT_SUPPORTED,
        ),
        (code::ERROR_CANT_ACCESS_FILE, f::ERROR_CANT_ACCESS_FILE),
        (
            code::ERROR_CANT_RESOLVE_FILENAME,
            f::ERROR_CANT_RESOLVE_FILENAME,
        ),
        (code::ERROR_NOT_CONNECTED, f::ERROR_NOT_CONNECTED),
        (
            code::ERROR_INVALID_REPARSE_DATA,
            f::ERROR_INVALID_REPARSE_DATA,
        ),
    ];
    for (ours, theirs) in pairs {
        assert_eq!(ours, theirs);
    }
}
