//! Model parameters: what a model's validation returns and what `fabricsim list` prints.
//!
//! Every model (a congestion control, PFC, ECN, GSE, a workload kind, a topology kind)
//! owns the serde struct of its scenario section, its defaults and its checks. The checks
//! know only the model's own section, so they name fields relative to it; the section
//! that contains it adds its own name ([`ParamError::within`]) and the scenario layer adds
//! the file (`ScenarioError::param`). No model needs to know where the scenario mounts it.
//!
//! The listing is the other half of that ownership: each model lists its parameters with
//! the values its code resolves them to ([`Param`]), so `fabricsim list` cannot drift from
//! the defaults the simulator uses.

use crate::base::units::{fmt_bytes_exact, fmt_rate_exact, fmt_time_exact, Rate, Time};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use std::fmt;

/// A parameter a model rejects: which field and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// Dotted path of the field relative to the section that reported it, with `[i]` for
    /// list elements (`g`, `flows[0].dst`); empty for the section as a whole.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ParamError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> ParamError {
        ParamError {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error seen from the section that holds the reporting one under `section`
    /// (`cc.dcqcn`, `workload[2]`).
    pub fn within(mut self, section: &str) -> ParamError {
        self.field = if self.field.is_empty() {
            section.to_string()
        } else if self.field.starts_with('[') || section.is_empty() {
            format!("{section}{}", self.field)
        } else {
            format!("{section}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "field `{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ParamError {}

/// Shorthand for a check's result.
pub type Checked = Result<(), ParamError>;

/// A file a scenario names (relative to the scenario's folder): an empty name would read
/// the folder itself, and a message about reading a directory would not say which field
/// is wrong.
pub fn check_file_name(name: &str, field: &str) -> Checked {
    if name.trim().is_empty() {
        return Err(ParamError::new(
            field,
            "the file name is empty: name a file (relative to the scenario's folder)",
        ));
    }
    Ok(())
}

/// A setting that multiplies the size of what its section makes (`planes`, `campuses`,
/// `chunks`, `ranks_per_host`), with that size were the setting at its least value
/// (`None`: the settings do not count with it there). The memory budget names, as the
/// field that drives a count, the knob whose least value shrinks it most: a refusal then
/// says `topology.planes`, not `topology`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeKnob<S> {
    /// The field, relative to the section.
    pub field: &'static str,
    /// The size with the field at its least value.
    pub least: Option<S>,
}

/// A field and what sets it to its least value in a copy of the settings.
pub type Knob<C> = (&'static str, fn(&mut C));

/// The knobs of `cfg`: each `(field, set it to its least value)` applied to a copy of the
/// settings, sized by `count`. A setter that leaves the copy as it is (a field not
/// given) makes a knob that shrinks nothing.
pub fn size_knobs<C: Clone, S>(
    cfg: &C,
    knobs: &[Knob<C>],
    count: impl Fn(&C) -> Option<S>,
) -> Vec<SizeKnob<S>> {
    knobs
        .iter()
        .map(|&(field, least)| {
            let mut c = cfg.clone();
            least(&mut c);
            SizeKnob {
                field,
                least: count(&c),
            }
        })
        .collect()
}

/// The knob of `knobs` that drives `count` most: the one whose least value makes the
/// count smallest, if it makes it smaller than `now` at all (the first of equals).
pub fn driving_knob<S>(
    knobs: &[SizeKnob<S>],
    now: u64,
    count: impl Fn(&S) -> u64,
) -> Option<&'static str> {
    let mut best: Option<(&'static str, u64)> = None;
    for k in knobs {
        if let Some(n) = k.least.as_ref().map(&count) {
            if n < now && best.is_none_or(|(_, b)| n < b) {
                best = Some((k.field, n));
            }
        }
    }
    best.map(|(f, _)| f)
}

/// One parameter as `fabricsim list` shows it: its name in the scenario section, the value
/// the code resolves it to (written as it would be in a scenario file), and a note: where
/// the value comes from (\[paper\], \[code\], \[recon\]) or what it means.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Field name.
    pub name: &'static str,
    /// Resolved value, in scenario syntax (`"50us"`, `0.875`, `true`); `required`
    /// for a field without a default, `unset` for an optional one whose absence the note
    /// explains.
    pub value: String,
    /// Provenance or meaning.
    pub note: String,
    /// The quantity `value` writes, for a duration, size or rate: what the loader must
    /// read back from it (tests parse every listed value and compare).
    pub quantity: Option<Quantity>,
}

/// A listed default that a scenario writes with a unit, as the code holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Picoseconds ([`crate::base::units::parse_time`]).
    Time(Time),
    /// Bytes ([`crate::base::units::parse_bytes`]).
    Bytes(u64),
    /// Bits per second ([`crate::base::units::parse_rate`]).
    Rate(u64),
}

impl Param {
    /// A row with an already formatted value.
    pub fn new(name: &'static str, value: impl Into<String>, note: impl Into<String>) -> Param {
        Param {
            name,
            value: value.into(),
            note: note.into(),
            quantity: None,
        }
    }
    /// A required field: it has no default.
    pub fn required(name: &'static str, note: impl Into<String>) -> Param {
        Param::new(name, "required", note)
    }
    /// An optional field without a fixed default (the note says what unset means).
    pub fn unset(name: &'static str, note: impl Into<String>) -> Param {
        Param::new(name, "unset", note)
    }
    /// A number, boolean or other value written as it displays.
    pub fn plain(name: &'static str, v: impl fmt::Display, note: impl Into<String>) -> Param {
        Param::new(name, v.to_string(), note)
    }
    /// An enum value, written with the name serde reads it by (quoted); the note is
    /// prefixed with every name the enum accepts.
    pub fn choice<T>(name: &'static str, v: &T, note: impl Into<String>) -> Param
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let word = match toml::Value::try_from(v) {
            Ok(toml::Value::String(s)) => s,
            _ => String::from("?"),
        };
        let note = note.into();
        let all = alternatives::<T>();
        Param::new(
            name,
            format!("\"{word}\""),
            if note.is_empty() {
                all
            } else {
                format!("{all}: {note}")
            },
        )
    }
    /// A nested section, described under its own heading.
    pub fn section(name: &'static str, heading: &str) -> Param {
        Param::new(name, "table", format!("{heading}, below"))
    }
    /// A word value (an enum name, a host set): quoted.
    pub fn word(name: &'static str, v: &str, note: impl Into<String>) -> Param {
        Param::new(name, format!("\"{v}\""), note)
    }
    /// A duration, in the largest unit that writes it exactly (`"1us"`, `"1.5ms"`).
    pub fn time(name: &'static str, t: Time, note: impl Into<String>) -> Param {
        Param {
            quantity: Some(Quantity::Time(t)),
            ..Param::new(name, format!("\"{}\"", fmt_time_exact(t)), note)
        }
    }
    /// A byte count, as scenario files write sizes (`"32MB"`, `"16KiB"`), exactly.
    pub fn bytes(name: &'static str, b: u64, note: impl Into<String>) -> Param {
        Param {
            quantity: Some(Quantity::Bytes(b)),
            ..Param::new(name, format!("\"{}\"", fmt_bytes_exact(b)), note)
        }
    }
    /// A rate given in bits per second (rounded to a whole bit per second, what the
    /// loader holds), exactly (`"100Gbps"`, `"2.5Gbps"`).
    pub fn rate(name: &'static str, bps: f64, note: impl Into<String>) -> Param {
        let r = Rate(bps.round().max(0.0) as u64);
        Param {
            quantity: Some(Quantity::Rate(r.0)),
            ..Param::new(name, format!("\"{}\"", fmt_rate_exact(r)), note)
        }
    }
}

/// Names as error messages list them: `` `a`, `b` `` (serde's style).
pub fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An enum written as a table with a `kind` key naming the variant (`[topology]`,
/// `[[workload]]`).
///
/// serde's own `#[serde(tag = "kind")]` buffers the table before choosing the variant,
/// which loses the path of a failing field inside it: a bad `topology.host_rate` would be
/// reported at `topology`. Instead the table is reshaped into serde's external tagging
/// (`{ leaf_spine = { ... } }`) and deserialized with the path tracked; the inner path is
/// carried in the message as "field `host_rate`: ...", which the scenario loader folds
/// into the field path.
pub trait TaggedByKind: Sized {
    /// The `kind` names, in declaration order (taken from the kind's registry).
    fn kinds() -> Vec<&'static str>;
    /// The externally tagged deserializer derived with `remote = "Self"`.
    fn de_external<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// Deserializes a [`TaggedByKind`] enum from its `kind`-tagged table.
pub fn de_kind_tagged<'de, D: Deserializer<'de>, T: TaggedByKind>(d: D) -> Result<T, D::Error> {
    let names = T::kinds();
    let kinds = || quoted_list(&names);
    let mut table = toml::Table::deserialize(d)?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(v) => {
            return Err(D::Error::custom(format!(
                "field `kind`: expected a string, one of {}; found {}",
                kinds(),
                v.type_str()
            )))
        }
        None => {
            return Err(D::Error::custom(format!(
                "missing field `kind`: one of {}",
                kinds()
            )))
        }
    };
    if !names.contains(&kind.as_str()) {
        return Err(D::Error::custom(format!(
            "field `kind`: unknown variant `{kind}`, expected one of {}",
            kinds()
        )));
    }
    let mut outer = toml::Table::new();
    outer.insert(kind, toml::Value::Table(table));
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(outer), &mut track);
    T::de_external(de).map_err(|e| {
        // The path starts with the variant name; what follows is the field inside it.
        let path = track.path().to_string();
        let inner = match path.split_once('.') {
            Some((_, rest)) => rest.to_string(),
            None => path
                .find('[')
                .map(|i| path[i..].to_string())
                .unwrap_or_default(),
        };
        let msg = e.message().trim().to_string();
        if inner.is_empty() {
            D::Error::custom(msg)
        } else {
            D::Error::custom(format!("field `{inner}`: {msg}"))
        }
    })
}

/// What a model tells `fabricsim list` about itself. The model's name is not here: it is
/// given once, in the registry line that adds the model.
pub trait Described {
    /// One line on what it models.
    const ABOUT: &'static str;
    /// Its parameters with their default values.
    fn params() -> Vec<Param>;
}

/// A registry entry of a section tagged by `kind` (`[topology]`, `[[workload]]`).
#[derive(Clone, Copy, Debug)]
pub struct KindEntry {
    /// The `kind` name in scenario files.
    pub name: &'static str,
    /// One line on what it models.
    pub about: &'static str,
    /// Its parameters with their default values.
    pub params: fn() -> Vec<Param>,
    /// Test: panics unless `params` lists exactly the fields of the settings type.
    #[cfg(test)]
    pub(crate) check_fields: fn(),
}

/// Declares the kinds of a section tagged by `kind`, each once: its name, its variant of
/// the section's enum and its settings type. The settings type implements [`Described`]
/// and the model trait named in the header. Generates the enum (serde, with field paths
/// kept inside the tagged table: [`de_kind_tagged`]), the registry slice that `fabricsim
/// list` and error messages read, and `kind()` / `model()` on the enum.
///
/// ```ignore
/// kind_registry! {
///     /// One traffic generator (a table tagged by `kind`).
///     pub enum WorkloadCfg: dyn Generator, registry KINDS;
///     /// Flows listed in the scenario.
///     "flows" => Flows(flows::FlowsCfg),
/// }
/// ```
macro_rules! kind_registry {
    (
        $(#[$meta:meta])*
        pub enum $Enum:ident: dyn $Trait:path, registry $Reg:ident;
        $( $(#[$doc:meta])* $name:literal => $Variant:ident($Cfg:ty), )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, serde::Deserialize)]
        #[serde(remote = "Self", deny_unknown_fields)]
        pub enum $Enum {
            $( $(#[$doc])* #[serde(rename = $name)] $Variant($Cfg), )*
        }

        /// Every kind, in declaration order: `fabricsim list` and the names in error
        /// messages come from here.
        pub static $Reg: &[$crate::base::param::KindEntry] = &[
            $( $crate::base::param::KindEntry {
                name: $name,
                about: <$Cfg as $crate::base::param::Described>::ABOUT,
                params: <$Cfg as $crate::base::param::Described>::params,
                #[cfg(test)]
                check_fields: $crate::base::param::assert_describes_fields::<$Cfg>,
            }, )*
        ];

        impl $Enum {
            /// The `kind` name.
            pub fn kind(&self) -> &'static str {
                match self { $( $Enum::$Variant(_) => $name, )* }
            }
            /// The model of this kind.
            pub fn model(&self) -> &dyn $Trait {
                match self { $( $Enum::$Variant(c) => c, )* }
            }
        }

        impl $crate::base::param::TaggedByKind for $Enum {
            fn kinds() -> Vec<&'static str> {
                $Reg.iter().map(|k| k.name).collect()
            }
            fn de_external<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $Enum::deserialize(d)
            }
        }

        impl<'de> serde::Deserialize<'de> for $Enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::base::param::de_kind_tagged(d)
            }
        }
    };
}
pub(crate) use kind_registry;

/// Deserializes a name that must be one of `names` (a registry's), with serde's own
/// messages for an unknown name or a value that is not a string. `what` names the type
/// in those messages.
pub fn de_registry_name<'de, D: Deserializer<'de>>(
    d: D,
    what: &'static str,
    names: &'static [&'static str],
) -> Result<&'static str, D::Error> {
    struct V(&'static [&'static str]);
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = &'static str;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "one of {}", quoted_list(self.0))
        }
        fn visit_enum<A: serde::de::EnumAccess<'de>>(
            self,
            data: A,
        ) -> Result<Self::Value, A::Error> {
            use serde::de::VariantAccess;
            let (name, variant): (String, _) = data.variant()?;
            variant.unit_variant()?;
            self.0
                .iter()
                .copied()
                .find(|n| *n == name)
                .ok_or_else(|| A::Error::unknown_variant(&name, self.0))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            self.0
                .iter()
                .copied()
                .find(|n| *n == v)
                .ok_or_else(|| E::unknown_variant(v, self.0))
        }
    }
    d.deserialize_enum(what, names, V(names))
}

/// The names serde accepts for the enum `T`, as `"a" | "b"` for a listing's note. They
/// are read from serde's own message for an unknown name, so they cannot drift from the
/// enum's declaration.
pub fn alternatives<T: serde::de::DeserializeOwned>() -> String {
    expected_names::<T>(toml::Value::String("__no_such_variant".into()))
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The field names serde accepts for `T` (a struct that denies unknown fields), read
/// from the message serde gives for an unknown one. Tests use it to check that a
/// model's listing names every field of its section and nothing else.
#[cfg(test)]
pub(crate) fn serde_fields<T: serde::de::DeserializeOwned>() -> Vec<String> {
    let mut t = toml::Table::new();
    t.insert("__no_such_field".into(), toml::Value::Integer(0));
    expected_names::<T>(toml::Value::Table(t))
}

/// The names serde accepts for the enum `T`, read from its message for an unknown one.
#[cfg(test)]
pub(crate) fn serde_variants<T: serde::de::DeserializeOwned>() -> Vec<String> {
    expected_names::<T>(toml::Value::String("__no_such_variant".into()))
}

/// The backquoted names after "expected" in the error `T` gives for `probe`.
fn expected_names<T: serde::de::DeserializeOwned>(probe: toml::Value) -> Vec<String> {
    let msg = match T::deserialize(probe) {
        Ok(_) => return Vec::new(),
        Err(e) => e.to_string(),
    };
    let Some((_, expected)) = msg.split_once("expected") else {
        return Vec::new();
    };
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Checks that `params` names exactly the fields of `T`.
#[cfg(test)]
pub(crate) fn assert_lists_fields<T: serde::de::DeserializeOwned>(params: &[Param]) {
    let mut want = serde_fields::<T>();
    let mut got: Vec<String> = params.iter().map(|p| p.name.to_string()).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{}", std::any::type_name::<T>());
}

/// Checks that `T`'s [`Described::params`] names exactly the fields of `T`.
#[cfg(test)]
pub(crate) fn assert_describes_fields<T: serde::de::DeserializeOwned + Described>() {
    assert_lists_fields::<T>(&T::params());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_prefixes_the_section() {
        assert_eq!(
            ParamError::new("g", "x").within("cc.dcqcn").field,
            "cc.dcqcn.g"
        );
        assert_eq!(
            ParamError::new("[3].dst", "x").within("flows").field,
            "flows[3].dst"
        );
        assert_eq!(
            ParamError::new("", "x").within("workload[2]").field,
            "workload[2]"
        );
        assert_eq!(ParamError::new("g", "bad").to_string(), "field `g`: bad");
    }

    #[test]
    fn alternatives_come_from_serde() {
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        enum One {
            Alone,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        enum Two {
            Left,
            Right,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[allow(dead_code)]
        enum Three {
            A,
            BeeCee,
            D,
        }
        assert_eq!(alternatives::<One>(), "\"alone\"");
        assert_eq!(alternatives::<Two>(), "\"left\" | \"right\"");
        assert_eq!(alternatives::<Three>(), "\"a\" | \"bee_cee\" | \"d\"");
    }

    #[test]
    fn rows_are_written_in_scenario_syntax() {
        assert_eq!(Param::rate("r", 1e8, "").value, "\"100Mbps\"");
        assert_eq!(Param::word("w", "ns3", "").value, "\"ns3\"");
        assert_eq!(Param::plain("p", 0.125, "").value, "0.125");
    }
}
