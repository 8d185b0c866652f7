//! What a session is configured with, handed in when it is made
//! ([`Session::with_config`](crate::Session::with_config)); the core reads no environment.
//!
//! - [`Config`]: the product settings a manager starts with (durability, exclusive mode, restore
//!   mode; each can be changed per manager later) and its [`Tuning`].
//! - The documented product variables (`PI_SESSION_FSYNC`, `PI_SESSION_EXCLUSIVE`,
//!   `PI_SESSION_RESTORE_MISSING`) are parsed here, in [`Config::from_vars`], and nowhere else:
//!   the binding and the CLI look them up in the process environment and pass the lookup.
//! - [`Tuning`]: the size thresholds of the memory layout. Not product settings: the defaults are
//!   what ships; tests pass smaller ones to reach the big-session paths with small files.

use crate::fsio::Durability;

/// `PI_SESSION_FSYNC=1`: every manager fsyncs each write ([`Durability::Fsync`]).
pub const FSYNC_VAR: &str = "PI_SESSION_FSYNC";
/// `PI_SESSION_EXCLUSIVE=1`: every manager starts in exclusive mode (see [`crate::lock`]).
pub const EXCLUSIVE_VAR: &str = "PI_SESSION_EXCLUSIVE";
/// `PI_SESSION_PRIVATE=1`: new session files are made 0600 and new session directories 0700 (on
/// Unix; see `fsio::private`), instead of the modes the reference gives them.
pub const PRIVATE_VAR: &str = "PI_SESSION_PRIVATE";
/// `PI_SESSION_RESTORE_MISSING=1`: every manager starts in restore mode (see
/// [`Session::set_restore_missing`](crate::Session::set_restore_missing)).
pub const RESTORE_MISSING_VAR: &str = "PI_SESSION_RESTORE_MISSING";

/// How a new session behaves until told otherwise. `Default` is the product's default: buffered
/// writes, exclusive and restore mode off (as the reference), [`Tuning::PRODUCT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Config {
    /// How hard writes try to reach stable storage (`setFsync` changes it per manager).
    pub durability: Durability,
    /// Exclusive mode (`setExclusive` changes it per manager).
    pub exclusive: bool,
    /// Restore mode (`setRestoreMissing` changes it per manager).
    pub restore_missing: bool,
    /// New session files and directories private (`PI_SESSION_PRIVATE`).
    pub private_files: bool,
    pub tuning: Tuning,
}

/// The size thresholds where a session keeps lines in the file instead of in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Files at least this big are read in a streaming pass and their lines left on disk until
    /// asked for (opening, `createBranchedSession`'s streaming writer, a fork's new file).
    pub lazy_file_bytes: u64,
    /// Appended lines at least this long are not kept in memory once written: their records
    /// point into the session file, as a big session's do, so a session that grows by megabytes
    /// of tool output and images holds them once (as the caller's objects), not twice. Shorter
    /// lines stay, so that copying a branch does not read the file line by line.
    pub backed_line_bytes: usize,
}

impl Tuning {
    /// The shipped thresholds: 64 MiB files, 1 KiB lines.
    pub const PRODUCT: Tuning = Tuning {
        lazy_file_bytes: 64 << 20,
        backed_line_bytes: 1024,
    };
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning::PRODUCT
    }
}

impl Config {
    /// The defaults with the documented product variables applied. `var(name)` is the value of
    /// the variable `name`, `None` when it is unset; a switch is on for `1`, `true` or `always`
    /// and off for anything else (unset, empty, `0`).
    pub fn from_vars(mut var: impl FnMut(&str) -> Option<String>) -> Config {
        let mut on = |name: &str| matches!(var(name).as_deref(), Some("1" | "true" | "always"));
        Config {
            durability: if on(FSYNC_VAR) {
                Durability::Fsync
            } else {
                Durability::Buffered
            },
            exclusive: on(EXCLUSIVE_VAR),
            restore_missing: on(RESTORE_MISSING_VAR),
            private_files: on(PRIVATE_VAR),
            tuning: Tuning::PRODUCT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Config {
        Config::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn no_variables_give_the_product_defaults() {
        assert_eq!(with(&[]), Config::default());
        assert_eq!(Config::default().durability, Durability::Buffered);
        assert!(!Config::default().exclusive && !Config::default().restore_missing);
        assert_eq!(Config::default().tuning, Tuning::PRODUCT);
    }

    #[test]
    fn each_switch_is_on_for_1_true_or_always_only() {
        for on in ["1", "true", "always"] {
            let c = with(&[
                (FSYNC_VAR, on),
                (EXCLUSIVE_VAR, on),
                (RESTORE_MISSING_VAR, on),
            ]);
            assert_eq!(c.durability, Durability::Fsync, "{on}");
            assert!(c.exclusive && c.restore_missing, "{on}");
        }
        for off in ["", "0", "false", "yes", "TRUE", " 1"] {
            let c = with(&[
                (FSYNC_VAR, off),
                (EXCLUSIVE_VAR, off),
                (RESTORE_MISSING_VAR, off),
            ]);
            assert_eq!(c, Config::default(), "{off:?}");
        }
    }

    #[test]
    fn each_variable_sets_its_own_switch() {
        let c = with(&[(EXCLUSIVE_VAR, "1")]);
        assert!(c.exclusive && !c.restore_missing);
        assert_eq!(c.durability, Durability::Buffered);
        let c = with(&[(RESTORE_MISSING_VAR, "1")]);
        assert!(!c.exclusive && c.restore_missing);
        let c = with(&[(PRIVATE_VAR, "1")]);
        assert!(c.private_files && !c.exclusive && !c.restore_missing);
        assert!(!with(&[]).private_files);
    }
}
