//! The numbers that cross into JavaScript (event kinds, error codes, request flags) are each
//! written once, through these macros, which also list them by name: the binding hands that list
//! to JS (`boundary_codes`) and a test checks the TypeScript constants against it.

/// `pub const NAME: ty = value;` for each entry, plus `TABLE`: every entry by name.
macro_rules! code_consts {
    ($ty:ty { $($(#[$doc:meta])* $name:ident = $value:expr,)* }) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*
        /// Every code of this module by name (see `crate::boundary_codes`).
        pub const TABLE: &[(&str, u32)] = &[$((stringify!($name), $name as u32)),*];
    };
}
pub(crate) use code_consts;

/// A fieldless enum with explicit discriminants, plus `ALL` (every variant) and `TABLE` (every
/// variant by name).
macro_rules! code_enum {
    ($(#[$meta:meta])* pub enum $enum:ident: $repr:ident { $($(#[$doc:meta])* $name:ident = $value:expr,)* }) => {
        $(#[$meta])*
        #[repr($repr)]
        pub enum $enum {
            $($(#[$doc])* $name = $value,)*
        }
        impl $enum {
            pub const ALL: &'static [$enum] = &[$($enum::$name),*];
            /// Every code by name (see `crate::boundary_codes`).
            pub const TABLE: &'static [(&'static str, u32)] = &[$((stringify!($name), $value)),*];
        }
    };
}
pub(crate) use code_enum;
