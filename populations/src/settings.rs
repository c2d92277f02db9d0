//! The one settings style of the crate, written once: a `<Algo>Config` that is always valid,
//! built by its `<Algo>ConfigBuilder` (every field optional, the default written in `build`)
//! or deserialised through it.

/// For a settings type validated by `$builder::build`: `TryFrom<$builder>` (for serde's
/// `try_from`), `Default` (the builder's defaults) and `$config::builder()`.
macro_rules! built_by {
    ($config:ident, $builder:ident) => {
        impl TryFrom<$builder> for $config {
            type Error = crate::Error;
            fn try_from(b: $builder) -> crate::Result<Self> {
                b.build()
            }
        }

        impl Default for $config {
            fn default() -> Self {
                // INVARIANT: the defaults are valid (each type's tests build them).
                $builder::default().build().expect("defaults are valid")
            }
        }

        impl $config {
            /// A builder with every field at its default.
            pub fn builder() -> $builder {
                $builder::default()
            }
        }
    };
}

/// Builder setters: `$field(value)` sets `self.$field = Some(value)`.
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        $(
            #[doc = concat!("Set `", stringify!($field), "`.")]
            pub fn $field(mut self, value: $ty) -> Self {
                self.$field = Some(value);
                self
            }
        )*
    };
}

pub(crate) use {built_by, setters};
