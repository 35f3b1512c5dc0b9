//! Handles of the extension points: a newtype over `&'static dyn Trait`
//! (a load driver, an optimization) that compares, prints and
//! (de)serializes by its name. One macro writes those impls for each.

/// `named_handle!(Handle, Trait, name_method, lookup)`: `Deref` to the
/// trait object, equality and `Debug` by name, `Serialize` as the name,
/// `Deserialize` through `lookup: fn(&str) -> Result<Handle, String>`.
#[macro_export]
macro_rules! named_handle {
    ($handle:ident, $trait:ident, $name:ident, $lookup:expr) => {
        impl std::ops::Deref for $handle {
            type Target = dyn $trait;

            fn deref(&self) -> &Self::Target {
                self.0
            }
        }

        impl PartialEq for $handle {
            fn eq(&self, other: &Self) -> bool {
                self.$name() == other.$name()
            }
        }

        impl Eq for $handle {}

        impl std::fmt::Debug for $handle {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.$name())
            }
        }

        impl serde::Serialize for $handle {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.$name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $handle {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                let lookup: fn(&str) -> Result<$handle, String> = $lookup;
                lookup(&name).map_err(serde::de::Error::custom)
            }
        }
    };
}
