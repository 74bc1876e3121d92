//! Unit tests of `request.prompt`'s forms: a plain string is the text form (same prompt, same
//! fingerprint), and every other shape is refused with the file, line, field and the forms.

use super::*;

/// Loads a scenario whose `request:` block is `request` (indented two spaces), from `s.yaml`.
fn load_request(request: &str) -> Result<Scenario, ScenarioError> {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "name: t\ntarget:\n  sim: {{}}\n  models: [m]\nrequest:\n{request}load:\n  ladder: [1]\n"
    );
    load_str(&yaml, &dir.path().join("s.yaml"), &|_| None)
}

fn refused(request: &str) -> String {
    match load_request(request) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {request}"),
    }
}

#[test]
fn a_plain_string_is_the_text_form() {
    let plain = load_request("  prompt: \"Tell me a joke.\"\n").unwrap();
    let mapped = load_request("  prompt: {text: \"Tell me a joke.\"}\n").unwrap();
    assert_eq!(plain.request.prompt, "Tell me a joke.");
    assert_eq!(plain.request.prompts, PromptSource::Inline);
    assert_eq!(plain.fingerprint, mapped.fingerprint);
    assert_eq!(normalized_yaml(&plain), normalized_yaml(&mapped));
    // Unquoted, and a block scalar: still the text.
    let bare = load_request("  prompt: Tell me a joke.\n").unwrap();
    assert_eq!(bare.fingerprint, mapped.fingerprint);
    let block = load_request("  prompt: |\n    line one\n    line two\n").unwrap();
    assert_eq!(block.request.prompt, "line one\nline two\n");
    // A string that looks like a file name is still text: files go in prompt_file.
    let path = load_request("  prompt: prompts/p.txt\n").unwrap();
    assert_eq!(path.request.prompt, "prompts/p.txt");
}

#[test]
fn other_shapes_name_the_file_line_field_and_forms() {
    for (request, says) in [
        ("  prompt: 2000\n", "prompt: {synthetic_tokens: 2000}"),
        ("  prompt: [a, b]\n", "a list"),
        ("  prompt: true\n", "true or false"),
        ("  prompt: -3\n", "a number"),
        ("  prompt: {txt: hi}\n", "unknown field `txt`"),
        ("  prompt: \"  \"\n", "says nothing"),
        ("  prompt: {}\n", "says nothing"),
    ] {
        let e = refused(request);
        assert!(e.contains("s.yaml:6"), "no file and line in {e}");
        assert!(e.contains("request.prompt"), "no field in {e}");
        assert!(e.contains(says), "{says:?} not in {e}");
        if !says.starts_with("unknown") {
            assert!(
                e.contains("prompt: \"Hello\"") && e.contains("{text: \"Hello\"}"),
                "the forms are not named in {e}"
            );
        }
    }
}
