//! Names users type (operations, algorithms, schedules, network models,
//! placements, presets), spelled once per idea, and what to say when one
//! is unknown.
//!
//! An enum that users name implements [`Named`]: its [`Named::ALL`] and
//! [`Named::name`] are the one table of its names; parsing, help texts and
//! "unknown X" messages are derived from them. [`unknown`] builds the
//! message, with a suggestion when a known name is close to the typed one
//! ([`nearest`]: typos, transpositions, a missing letter).

/// An enum whose values users name.
pub trait Named: Copy + 'static {
    /// Every value, in the order help texts list them.
    const ALL: &'static [Self];
    /// What users call the idea in messages ("schedule").
    const WHAT: &'static str;

    /// The name users type.
    fn name(self) -> &'static str;

    /// The value named `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }

    /// Every name, in [`Named::ALL`]'s order.
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.name()).collect()
    }

    /// The value named `name`, or the message [`unknown`] makes.
    fn parse(name: &str) -> Result<Self, String> {
        Self::from_name(name).ok_or_else(|| unknown(Self::WHAT, name, &Self::names()))
    }
}

/// The known name closest to `word`, if it is close enough to be what was
/// meant: at most a third of the longer name's characters differ (edits,
/// ignoring case, with a transposition counting once), and at least one
/// is shared; or, for a word of three letters or more, the one known
/// name that begins with it (`prio` for `priority`).
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_lowercase();
    // or the one name a word of three letters or more begins (`prio`)
    let starts: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| {
            *k != word && lower.chars().count() >= 3 && k.to_lowercase().starts_with(&lower)
        })
        .collect();
    if let [k] = starts[..] {
        return Some(k);
    }
    known
        .iter()
        .filter(|&&k| k != word)
        .map(|&k| (strsim::damerau_levenshtein(&lower, &k.to_lowercase()), k))
        .filter(|&(d, k)| {
            let longest = lower.chars().count().max(k.chars().count());
            d < longest && 3 * d <= longest
        })
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// " (did you mean `X`?)" for the [`nearest`] known name, or nothing.
pub fn did_you_mean(word: &str, known: &[&str]) -> String {
    nearest(word, known)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// "unknown WHAT `NAME` (did you mean `X`?); known: A, B, C".
pub fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    format!(
        "unknown {what} `{name}`{}; known: {}",
        did_you_mean(name, known),
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name_and_strangers_find_none() {
        let keys = ["nodes", "gpus_per_node", "network", "nics_per_node"];
        assert_eq!(nearest("gpus_per_nod", &keys), Some("gpus_per_node"));
        assert_eq!(nearest("gpus-per-node", &keys), Some("gpus_per_node"));
        assert_eq!(nearest("ndoes", &keys), Some("nodes"));
        assert_eq!(nearest("Network", &keys), Some("network"));
        assert_eq!(nearest("bandwidth", &keys), None);
        assert_eq!(nearest("x", &keys), None);
        assert_eq!(nearest("prio", &["fifo", "priority"]), Some("priority"));
        // a beginning two names share is no hint
        assert_eq!(
            nearest("gpus", &["gpus_per_node", "gpus_per_pcie_switch"]),
            None
        );
        assert_eq!(nearest("nodes", &keys), None, "an exact name is not a typo");
    }

    #[test]
    fn the_message_lists_every_name_and_suggests_the_nearest() {
        let known = ["fifo", "priority"];
        assert_eq!(
            unknown("schedule", "priorty", &known),
            "unknown schedule `priorty` (did you mean `priority`?); known: fifo, priority"
        );
        assert_eq!(
            unknown("schedule", "lifo", &known),
            "unknown schedule `lifo` (did you mean `fifo`?); known: fifo, priority"
        );
        assert_eq!(
            unknown("schedule", "round-robin", &known),
            "unknown schedule `round-robin`; known: fifo, priority"
        );
    }

    /// Every named enum's table round-trips, and its names are distinct.
    #[test]
    fn every_name_parses_back_to_its_value() {
        fn check<T: Named + PartialEq + std::fmt::Debug>() {
            for &v in T::ALL {
                assert_eq!(T::parse(v.name()), Ok(v));
            }
            let mut names = T::names();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), T::ALL.len(), "{}", T::WHAT);
            assert!(
                T::parse("no-such-name")
                    .unwrap_err()
                    .starts_with("unknown ")
            );
        }
        check::<crate::collective::Op>();
        check::<crate::collective::Algo>();
        check::<crate::net::NetModel>();
        check::<crate::cluster::Placement>();
        check::<crate::strategy::Schedule>();
    }
}
