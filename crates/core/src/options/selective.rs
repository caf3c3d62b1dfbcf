//! `options.selectiveRules`, read from JSON into [`SelectiveRules`].

use serde_json::{Map, Value};

use crate::base::error::ValidationError;
use crate::model::message::type_name;
use crate::plan::selective::{Rule, SelectiveRules};

impl SelectiveRules {
    /// Reads `{ toolResults?: { strategy: 'truncate' | 'drop' | 'none', keepRecent? }, skills?,
    /// assistantMessages?, userMessages? }`. Absent keys keep the seed's default; a `truncate`
    /// without `keepRecent` keeps the default count of its type (3, 1, 5, 5). Unknown keys are
    /// errors (a misspelt rule would silently do nothing).
    pub fn from_json(value: &Value) -> Result<SelectiveRules, ValidationError> {
        let Value::Object(map) = value else {
            return Err(ValidationError::argument(
                "options.selectiveRules",
                format!("expected an object, got {}", type_name(value)),
            ));
        };
        let mut rules = SelectiveRules::default();
        for (key, rule) in map {
            if rule.is_null() {
                continue;
            }
            let (slot, default_keep) = match key.as_str() {
                "toolResults" => (&mut rules.tool_results, 3),
                "skills" => (&mut rules.skills, 1),
                "assistantMessages" => (&mut rules.assistant_messages, 5),
                "userMessages" => (&mut rules.user_messages, 5),
                other => {
                    return Err(ValidationError::argument(
                        &format!("options.selectiveRules.{other}"),
                        format!("unknown rule (expected one of {})", Self::KEYS.join(", ")),
                    ))
                }
            };
            *slot = parse_rule(key, rule, default_keep)?;
        }
        Ok(rules)
    }
}

fn parse_rule(key: &str, value: &Value, default_keep: usize) -> Result<Rule, ValidationError> {
    let name = format!("options.selectiveRules.{key}");
    let Value::Object(map) = value else {
        return Err(ValidationError::argument(
            &name,
            format!(
                "expected {{ strategy: 'truncate' | 'drop' | 'none', keepRecent? }}, got {}",
                type_name(value)
            ),
        ));
    };
    let keep = map
        .get("keepRecent")
        .filter(|v| !v.is_null())
        .map(|v| {
            crate::options::int_in(
                v,
                &format!("selectiveRules.{key}.keepRecent"),
                crate::options::ranges::MESSAGES_OR_ZERO,
            )
        })
        .transpose()?
        .map(|n| n as usize);
    match get_str(map, "strategy") {
        Some("none") => Ok(Rule::None),
        Some("drop") => Ok(Rule::Drop),
        Some("truncate") | None => Ok(Rule::Truncate {
            keep_recent: keep.unwrap_or(default_keep),
        }),
        Some(other) => Err(ValidationError::argument(
            &name,
            format!("unknown strategy {other:?} (expected \"truncate\", \"drop\" or \"none\")"),
        )),
    }
}

fn get_str<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}
