//! Where a field's value sits in the scenario: an [`At`] names the engine's
//! path of the value (which gives the field its id and its error message)
//! and reads and writes it. `at!` makes one from a field of the scenario
//! or of an [`Item`] (a class, a target, a hardware option), so a panel
//! states each place once.

use std::sync::Arc;

use sojourn_engine::ScenarioParams;

use crate::registry::Kind;

/// Reads a value of type `T` out of the scenario.
pub type Reader<T> = Arc<dyn Fn(&ScenarioParams) -> T + Send + Sync>;
/// Writes a value of type `T` into the scenario.
pub type Writer<T> = Arc<dyn Fn(&mut ScenarioParams, T) + Send + Sync>;

/// A value of the scenario and the engine's path of it. Reading gives
/// `None` when the value is not there (a removed class, a target of
/// another metric); writing there does nothing.
pub struct At<T> {
    pub path: String,
    pub get: Reader<Option<T>>,
    pub set: Writer<T>,
}

impl<T: 'static> At<T> {
    pub fn new(
        path: impl Into<String>,
        get: impl Fn(&ScenarioParams) -> Option<T> + Send + Sync + 'static,
        set: impl Fn(&mut ScenarioParams, T) + Send + Sync + 'static,
    ) -> At<T> {
        At {
            path: path.into(),
            get: Arc::new(get),
            set: Arc::new(set),
        }
    }

    /// The same place seen as a `U`: `show` reads it, and `store` turns a
    /// `U` into the value to write (`None`: leave it).
    pub fn map<U: 'static>(
        self,
        show: impl Fn(T) -> U + Send + Sync + 'static,
        store: impl Fn(U) -> Option<T> + Send + Sync + 'static,
    ) -> At<U> {
        let At { path, get, set } = self;
        At::new(
            path,
            move |p| get(p).map(&show),
            move |p, value| {
                if let Some(value) = store(value) {
                    set(p, value);
                }
            },
        )
    }
}

/// The place of a field of the scenario: `at!(model.layers)` reads and
/// writes `model.layers` under the path "model.layers". With an [`Item`]
/// first, a field of the item: `at!(class, deadline_s)` is
/// "classes\[0\].deadline_s".
macro_rules! at {
    ($item:ident, $field:ident) => {
        $item.at(
            stringify!($field),
            |item| Some(Clone::clone(&item.$field)),
            |item, value| item.$field = value,
        )
    };
    ($($field:ident).+) => {
        $crate::panels::at::At::new(
            stringify!($($field).+),
            |p| Some(Clone::clone(&p.$($field).+)),
            |p, value| p.$($field).+ = value,
        )
    };
}
pub(crate) use at;

/// Finds an item of type `I` in the scenario.
type Find<I> = Arc<dyn Fn(&ScenarioParams) -> Option<&I> + Send + Sync>;
/// Finds an item of type `I` in the scenario, to change it.
type FindMut<I> = Arc<dyn Fn(&mut ScenarioParams) -> Option<&mut I> + Send + Sync>;

/// One item of a list in the scenario (a class, a target, a hardware
/// option, a class's distribution), whose fields are places of their own.
pub struct Item<I> {
    path: String,
    find: Find<I>,
    find_mut: FindMut<I>,
}

impl<I: 'static> Item<I> {
    pub fn new(
        path: impl Into<String>,
        find: impl Fn(&ScenarioParams) -> Option<&I> + Send + Sync + 'static,
        find_mut: impl Fn(&mut ScenarioParams) -> Option<&mut I> + Send + Sync + 'static,
    ) -> Item<I> {
        Item {
            path: path.into(),
            find: Arc::new(find),
            find_mut: Arc::new(find_mut),
        }
    }

    /// The item's own path ("classes\[0\]").
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The item itself, read with `get` and changed with `set`.
    pub fn whole<T: 'static>(
        &self,
        get: impl Fn(&I) -> Option<T> + Send + Sync + 'static,
        set: impl Fn(&mut I, T) + Send + Sync + 'static,
    ) -> At<T> {
        let (find, find_mut) = (self.find.clone(), self.find_mut.clone());
        At::new(
            self.path.clone(),
            move |p| find(p).and_then(&get),
            move |p, value| {
                if let Some(item) = find_mut(p) {
                    set(item, value);
                }
            },
        )
    }

    /// The item's field `name`, read with `get` and written with `set`.
    pub fn at<T: 'static>(
        &self,
        name: &str,
        get: impl Fn(&I) -> Option<T> + Send + Sync + 'static,
        set: impl Fn(&mut I, T) + Send + Sync + 'static,
    ) -> At<T> {
        let At { get, set, .. } = self.whole(get, set);
        At {
            path: format!("{}.{name}", self.path),
            get,
            set,
        }
    }
}

/// A value a number box edits: how the box reads it and what it shows.
pub trait Number: Sized + 'static {
    /// How the box reads its text: whole numbers as counts.
    const KIND: Kind;
    /// Whether the box may be left empty (the value is then `None`).
    const OPTIONAL: bool = false;
    /// The number the box shows (`None`: an empty box).
    fn shown(self) -> Option<f64>;
    /// The value to store for the box's number (`None`: leave it as it is).
    fn stored(typed: Option<f64>) -> Option<Self>;
}

/// A whole number for a `u32` field (the engine checks its range).
pub fn count_u32(value: f64) -> u32 {
    value.clamp(0.0, u32::MAX as f64) as u32
}

impl Number for f64 {
    const KIND: Kind = Kind::Real;
    fn shown(self) -> Option<f64> {
        Some(self)
    }
    fn stored(typed: Option<f64>) -> Option<f64> {
        typed
    }
}

impl Number for u32 {
    const KIND: Kind = Kind::Count;
    fn shown(self) -> Option<f64> {
        Some(f64::from(self))
    }
    fn stored(typed: Option<f64>) -> Option<u32> {
        typed.map(count_u32)
    }
}

impl Number for u64 {
    const KIND: Kind = Kind::Count;
    fn shown(self) -> Option<f64> {
        Some(self as f64)
    }
    fn stored(typed: Option<f64>) -> Option<u64> {
        typed.map(|v| v as u64)
    }
}

/// Priorities: any whole number, negative too, so typed as a real.
impl Number for i32 {
    const KIND: Kind = Kind::Real;
    fn shown(self) -> Option<f64> {
        Some(f64::from(self))
    }
    fn stored(typed: Option<f64>) -> Option<i32> {
        typed.map(|v| v.clamp(i32::MIN as f64, i32::MAX as f64) as i32)
    }
}

impl Number for Option<f64> {
    const KIND: Kind = Kind::Real;
    const OPTIONAL: bool = true;
    fn shown(self) -> Option<f64> {
        self
    }
    fn stored(typed: Option<f64>) -> Option<Option<f64>> {
        Some(typed)
    }
}

impl Number for Option<u32> {
    const KIND: Kind = Kind::Count;
    const OPTIONAL: bool = true;
    fn shown(self) -> Option<f64> {
        self.map(f64::from)
    }
    fn stored(typed: Option<f64>) -> Option<Option<u32>> {
        Some(typed.map(count_u32))
    }
}

#[cfg(test)]
mod tests {
    use sojourn_engine::{ClassParams, Scenario};

    use super::*;

    fn class(index: usize) -> Item<ClassParams> {
        Item::new(
            format!("classes[{index}]"),
            move |p| p.classes.get(index),
            move |p| p.classes.get_mut(index),
        )
    }

    /// The engine's message for `at`'s path once `value` is written there.
    fn message_after<T: 'static>(at: &At<T>, value: T) -> Option<String> {
        let mut params = ScenarioParams::overnight_batch();
        (at.set)(&mut params, value);
        let error = Scenario::try_from(params).err()?;
        error.for_field(&at.path).map(str::to_string)
    }

    // A field shows the engine's message for its path: the path a place
    // names must be the one the engine reports a bad value there under.
    #[test]
    fn a_place_names_the_path_the_engine_reports_its_value_under() {
        assert_eq!(
            at!(engine.max_num_batched_tokens).path,
            "engine.max_num_batched_tokens"
        );
        assert!(message_after(&at!(engine.max_num_batched_tokens), 128).is_some());
        let second = class(1);
        let rate = at!(second, batches_per_hour);
        assert_eq!(rate.path, "classes[1].batches_per_hour");
        assert!(message_after(&rate, -3.0).is_some());
    }

    #[test]
    fn a_place_reads_and_writes_its_value_and_a_missing_item_is_left_alone() {
        let mut params = ScenarioParams::overnight_batch();
        let layers = at!(model.layers);
        (layers.set)(&mut params, 40);
        assert_eq!(params.model.layers, 40);
        assert_eq!((layers.get)(&params), Some(40));
        let missing = class(9);
        let deadline = at!(missing, deadline_s);
        let before = params.clone();
        (deadline.set)(&mut params, 1.0);
        assert_eq!(params, before);
        assert_eq!((deadline.get)(&params), None);
    }

    // What an empty box means depends on the value: an optional one is
    // cleared, a required one keeps its value (the box shows an error).
    #[test]
    fn number_boxes_store_what_their_values_can_hold() {
        assert_eq!(f64::stored(None), None);
        assert_eq!(Option::<f64>::stored(None), Some(None));
        assert_eq!(Option::<u32>::stored(Some(7.0)), Some(Some(7)));
        assert_eq!(u32::stored(Some(-3.0)), Some(0));
        assert_eq!(u32::stored(Some(1e12)), Some(u32::MAX));
        assert_eq!(i32::stored(Some(-1e12)), Some(i32::MIN));
        assert_eq!(u64::stored(Some(5.0)), Some(5));
        assert_eq!(Option::<u32>::None.shown(), None);
        assert_eq!(7u32.shown(), Some(7.0));
    }
}
