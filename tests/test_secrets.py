"""The credential scanner: each shape and position, its near misses, ordinary text, the mask.

Key-shaped samples are assembled from parts so the repository holds no key-shaped literal.
"""

from __future__ import annotations

import pytest

from sidecar.secrets import (
    MASK,
    MIN_ENTROPY_BITS,
    SECRET_PATTERNS,
    SecretScanner,
    looks_random,
    shannon_entropy,
)

SCANNER = SecretScanner()
KEY = "AKIA" + "ABCDEFGHIJKLMNOP"
A36 = "A1b2C3d4E5" * 3 + "F6g7H8"  # 36 alphanumerics

# kind -> samples that must be found, exactly as written (the match is the whole sample).
SHAPES: dict[str, list[str]] = {
    "aws_access_key": [prefix + "ABCDEFGHIJ234567" for prefix in ("AKIA", "ASIA", "ABIA", "ACCA")],
    "github_token": [p + "_" + A36 for p in ("ghp", "gho", "ghu", "ghs", "ghr")]
    + ["ghp_" + "a" * 255],
    "github_pat": ["github_pat_" + "A_1b" * 5 + "Cd", "github_pat_" + "x" * 255],
    "gitlab_token": ["glpat-" + "a_B-9" * 4 + "c", "glpat-" + "z" * 40, "glrt-" + "z" * 20],
    "slack_token": ["xox" + k + "-" + "12345-abCD" for k in "abposre"] + ["xapp-1-" + A36],
    "anthropic_key": ["sk-ant-" + "api03_" + "Q-" * 7 + "q", "sk-ant-" + "a" * 20],
    "openai_key": [
        "sk-" + "a" * 20,
        "sk-proj-" + "Ab_-9" * 4 + "c",
        "sk-svcacct-" + "x" * 30,
        "sk-admin-" + "y" * 24,
    ],
    "google_api_key": ["AIza" + "0aZ_-" * 6 + "0aZ_b"],
    "stripe_key": ["sk_live_" + "a1" * 10, "rk_live_" + "Z9" * 15, "whsec" + "_" + A36[:24]],
    "jwt": ["eyJ" + "hbGc_-J9" + ".eyJ" + "zdW_-Oi9" + "." + "ab9_-DEF"],
    "private_key": [
        "-----BEGIN PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN X509 PRIVATE KEY-----",
    ],
    "huggingface_token": ["hf" + "_" + A36[:30], "hf" + "_" + A36],
    "npm_token": ["npm" + "_" + A36],
    "pypi_token": ["pypi" + "-AgE" + A36 + A36],
    "sendgrid_key": ["SG" + "." + A36[:22] + "." + A36 + A36[:7]],
    "shopify_token": ["shp" + k + "_" + "0a1B" * 8 for k in ("at", "ca", "pa", "ss")],
    "digitalocean_token": ["do" + k + "_v1_" + "0a1b" * 16 for k in "por"],
    "vault_token": ["hv" + k + "." + A36[:24] for k in "sbr"],
    "databricks_token": ["dapi" + "0a1b" * 8],
    "grafana_token": ["glsa" + "_" + A36[:32] + "_" + "0a1B2c3D", "glc" + "_" + A36 + "+/x"],
    "age_secret_key": ["AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58]],
    "telegram_bot_token": ["123456789" + ":AA" + A36[:33]],
}

# Near misses: one step outside a pattern; that kind may not be found (another may).
KIND_NEAR_MISSES = [
    ("anthropic_key", "sk-ant-" + "a" * 19),
    ("jwt", "eyJ" + "a" * 8 + ".eyJ" + "a" * 8 + "." + "a" * 7),
    ("github_pat", "github_pat_" + "x" * 256),
    ("github_token", "ghp_" + "a" * 256),
]
NEAR_MISSES = [
    "AKIA" + "ABCDEFGHIJ23456",  # 15 characters after the prefix
    "AKIA" + "ABCDEFGHIJ2345678",  # 17: part of a longer word
    "AKIA" + "abcdefghij234567",  # lower case
    "AKIB" + "ABCDEFGHIJ234567",
    "x" + "AKIA" + "ABCDEFGHIJ234567",  # inside a word
    "ghp_" + A36[:35],
    "ghx_" + A36,
    "ghp_" + A36 + "_",
    "github_pat_" + "a" * 21,
    "glpat-" + "a" * 19,
    "xoxz-" + "1234567890",
    "xoxb-" + "123456789",
    "sk-" + "a" * 19,
    "sk-proj-" + "a" * 11 + "!" + "a" * 10,
    "AIza" + "0" * 34,
    "AIza" + "0" * 36,
    "sk_live_" + "a" * 19,
    "pk_live_" + "a" * 30,
    "sk_test_" + "a" * 30,
    "eyJ" + "a" * 7 + ".eyJ" + "a" * 8 + "." + "a" * 8,
    "eyJ" + "a" * 8 + ".eyJ" + "a" * 7 + "." + "a" * 8,
    "eyJ" + "a" * 8 + ".eyJ" + "a" * 8 + "." + "a" * 7,
    "eyJ" + "a" * 8 + ".ey" + "a" * 9 + "." + "a" * 8,
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "-----BEGIN  PRIVATE KEY-----",
    "-----BEGIN rsa PRIVATE KEY-----",
]

ORDINARY = [
    "ls -la /home/user/project",
    "git commit -m 'fix: handle the empty token list in the parser'",
    "npm install --save-dev typescript",
    "export PATH=/usr/local/bin:$PATH",
    "mkdir -p a/b && cp -p x y",
    "docker run -p 8080:80 -u 1000 nginx",
    "ssh -p 2222 host uptime",
    "git push -u origin main",
    "max_tokens=100 temperature=0.2",
    "git checkout 3f2a9c1d5e6b7a8c9d0e1f2a3b4c5d6e7f8a9b0c",
    "KEY_FILE=/etc/ssl/server.pem PASSWORD_FILE=/run/secrets/db",
    "monkey=banana hotkey=ctrl",
    "PWD=/home/u OLDPWD=/tmp",
    "docker login --password-stdin -u ci registry.example.com",
    "curl https://user@example.com/path?q=1",
    "https://example.com:8443/a:b@",
    '{"path": "src/components/Button.tsx", "content": "export default Button"}',
    "uuid=123e4567-e89b-12d3-a456-426614174000",
    "the token list is empty; pass --verbose for more",
    "sk-learn is a library; sk_test_ keys are for testing",
    "The quick brown fox jumps over the lazy dog again and again",
]


@pytest.mark.parametrize(("kind", "sample"), [(k, s) for k, v in SHAPES.items() for s in v])
def test_each_shape_is_found_whole_anywhere_in_the_text(kind: str, sample: str) -> None:
    for text, offset in ((sample, 0), (f"x {sample} y", 2), (f"a={sample}", 2)):
        found = [(m.kind, m.start, m.end) for m in SCANNER.find(text) if m.kind == kind]
        assert found == [(kind, offset, offset + len(sample))], text


@pytest.mark.parametrize(("kind", "text"), KIND_NEAR_MISSES)
def test_near_misses_are_not_that_kind(kind: str, text: str) -> None:
    assert kind not in [m.kind for m in SCANNER.find(text)]


@pytest.mark.parametrize(
    ("kind", "sample"),
    [(k, s) for k, v in SHAPES.items() for s in v if k != "private_key"],
)
def test_shapes_start_and_end_at_word_boundaries(kind: str, sample: str) -> None:
    assert kind not in [m.kind for m in SCANNER.find("x" + sample)]
    assert kind not in [m.kind for m in SCANNER.find("_" + sample)]
    if kind != "jwt":  # a JWT's last segment may end on a dash
        spans = [(m.start, m.end) for m in SCANNER.find(sample + "-") if m.kind == kind]
        assert spans == [(0, len(sample))]  # never ends on a dash
    whole = [(m.start, m.end) for m in SCANNER.find(sample + "_") if m.kind == kind]
    assert (0, len(sample)) not in whole  # a word character continues it


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_credentials(text: str) -> None:
    assert SCANNER.find(text) == []
    assert SCANNER.find(f"say {text} now") == []


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert SCANNER.find(text) == []
    assert SCANNER.find_positions(text) == []
    assert SCANNER.mask(text) == text
    assert not SCANNER.any_in([text])


def test_every_shape_has_samples() -> None:
    assert {kind for kind, _ in SECRET_PATTERNS} == set(SHAPES)


@pytest.mark.parametrize(
    ("sample", "visible"),
    [
        ("AKIA" + "ABCDEFGHIJ234567", "AKIA"),  # 20 characters: keeps 4
        ("sk-" + "a" * 13 + "b" * 7, "sk-a"),
        ("xoxb-" + "12345", None),  # too short to be one
        ("glpat-" + "b" * 20, "glpa"),
    ],
)
def test_a_shaped_key_keeps_at_most_four_characters(sample: str, visible: str | None) -> None:
    for text in (sample, f"key {sample} end", f"{sample}\n{sample}"):
        masked = SCANNER.mask(text)
        if visible is None:
            assert masked == text
            continue
        assert masked == text.replace(sample, visible + MASK)
        assert sample[len(visible) :] not in masked
        assert sample[1:] not in masked and sample[:-1] not in masked


def test_a_short_key_keeps_a_quarter_at_most() -> None:
    # keep = min(4, length // 4): a 10-character slack token keeps 2... but slack needs 15.
    sample = "xoxb-" + "1234567890"  # 15 characters: keeps 3
    assert SCANNER.mask(sample) == "xox" + MASK


def test_a_secret_at_the_very_start_and_end_is_masked() -> None:
    assert SCANNER.mask(KEY) == "AKIA" + MASK
    assert SCANNER.mask(KEY + " x") == "AKIA" + MASK + " x"
    assert SCANNER.mask("x " + KEY) == "x AKIA" + MASK
    assert SCANNER.mask("PASSWORD=hunter2") == "PASSWORD=" + MASK


def test_two_secrets_and_overlapping_spans_are_all_masked() -> None:
    text = f"{KEY} and AWS_ACCESS_KEY={KEY} and TOKEN=abc"
    masked = SCANNER.mask(text)
    assert KEY[4:] not in masked and "abc" not in masked
    assert masked == f"AKIA{MASK} and AWS_ACCESS_KEY={MASK} and TOKEN={MASK}"


# -- positions: secret because of where they stand -----------------------------------

POSITIONS = [
    # (text, the secret, what the masked text is)
    (
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY; aws s3 ls",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"export AWS_SECRET_ACCESS_KEY={MASK}; aws s3 ls",
    ),
    ("aws_secret_access_key = abc/DEF+123", "abc/DEF+123", f"aws_secret_access_key = {MASK}"),
    ("curl https://user:hunter2@db.example/x", "hunter2", f"curl https://user:{MASK}@db.example/x"),
    ("postgres://app:s3cr3t@db:5432/app", "s3cr3t", f"postgres://app:{MASK}@db:5432/app"),
    ("redis://:hunter2@cache:6379", "hunter2", f"redis://:{MASK}@cache:6379"),
    *[
        (f"{scheme}://u:hunter2@h", "hunter2", f"{scheme}://u:{MASK}@h")
        for scheme in ("x", "git+ssh", "s3", "x.y", "x-y", "a_https")
    ],
    ("mysql -phunter2", "hunter2", f"mysql -p{MASK}"),
    ("mysql\t-phunter2", "hunter2", f"mysql\t-p{MASK}"),
    ("mysqlsh -u root -phunter2", "hunter2", f"mysqlsh -u root -p{MASK}"),
    ("sshpass\t-p\thunter2 ssh h", "hunter2", f"sshpass\t-p\t{MASK} ssh h"),
    ("curl -uadmin:pw1x x", "pw1x", f"curl -uadmin:{MASK} x"),
    ("curl -u 'admin:pw1x' x", "pw1x", f"curl -u 'admin:{MASK}' x"),
    ('curl -u "admin:pw1x" x', "pw1x", f'curl -u "admin:{MASK}" x'),
    ("curl --user=admin:pw1x x", "pw1x", f"curl --user=admin:{MASK} x"),
    ("curl --user\tadmin:pw1x x", "pw1x", f"curl --user\tadmin:{MASK} x"),
    ("curl\t-u\tadmin:pw1x x", "pw1x", f"curl\t-u\tadmin:{MASK} x"),
    ("curl -u :pw1x x", "pw1x", f"curl -u :{MASK} x"),
    *[
        (f"Authorization: {scheme} abc123", "abc123", f"Authorization: {scheme} {MASK}")
        for scheme in ("Token", "Digest", "Negotiate", "bearer")
    ],
    ("Authorization:Bearer abc123", "abc123", f"Authorization:Bearer {MASK}"),
    ("Authorization:\tBearer\tabc123", "abc123", f"Authorization:\tBearer\t{MASK}"),
    ("Authorization: Tokenabc123", "Tokenabc123", f"Authorization: {MASK}"),
    ("x-authorization: abc123", "abc123", f"x-authorization: {MASK}"),
    ("mysql -u root -phunter2 shop", "hunter2", f"mysql -u root -p{MASK} shop"),
    *[
        (f"{program} -u root -phunter2 shop", "hunter2", f"{program} -u root -p{MASK} shop")
        for program in (
            "mysqladmin",
            "mysqlimport",
            "mysqlshow",
            "mysqlcheck",
            "mysqlpump",
            "mariadb",
        )
    ],
    ("mysqldump -h db -pHunter2! shop", "Hunter2!", f"mysqldump -h db -p{MASK} shop"),
    ("MYSQL_PWD=hunter2 mysql shop", "hunter2", f"MYSQL_PWD={MASK} mysql shop"),
    ("PGPASSWORD=hunter2 psql -h db", "hunter2", f"PGPASSWORD={MASK} psql -h db"),
    ("tool --password=hunter2 go", "hunter2", f"tool --password={MASK} go"),
    ("tool --password hunter2 go", "hunter2", f"tool --password {MASK} go"),
    ("tool --api-key abc123 go", "abc123", f"tool --api-key {MASK} go"),
    ("vault login -token=s.abc123", "s.abc123", f"vault login -token={MASK}"),
    ("GITHUB_TOKEN=abc123 gh pr list", "abc123", f"GITHUB_TOKEN={MASK} gh pr list"),
    ("export CLIENT_SECRET='p a s s'", "p a s s", f"export CLIENT_SECRET='{MASK}'"),
    ('DB_PASSWORD="x y"', "x y", f'DB_PASSWORD="{MASK}"'),
    ("STRIPE_API_KEY=abc", "abc", f"STRIPE_API_KEY={MASK}"),
    ("password: hunter2", "hunter2", f"password: {MASK}"),
    ("sshpass -p hunter2 ssh host", "hunter2", f"sshpass -p {MASK} ssh host"),
    ("curl -u admin:hunter2 https://x", "hunter2", f"curl -u admin:{MASK} https://x"),
    ("curl --user admin:hunter2 x", "hunter2", f"curl --user admin:{MASK} x"),
    (
        "curl -H 'Authorization: Bearer abc.def' x",
        "abc.def",
        f"curl -H 'Authorization: Bearer {MASK}' x",
    ),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", f"Authorization: Basic {MASK}"),
    ('{"auth": "dXNlcjpwYXNz"}', "dXNlcjpwYXNz", f'{{"auth": "{MASK}"}}'),
    ("passwd=hunter2", "hunter2", f"passwd={MASK}"),
    ("GPG_PASSPHRASE=a1b2c3 rest", "a1b2c3", f"GPG_PASSPHRASE={MASK} rest"),
    ("DB_PASS=hunter2", "hunter2", f"DB_PASS={MASK}"),
    ("db.pass=hunter2", "hunter2", f"db.pass={MASK}"),
    ("x-api-key: abc123", "abc123", f"x-api-key: {MASK}"),
    ("app.key=abc123", "abc123", f"app.key={MASK}"),
    ("apikey=abc123", "abc123", f"apikey={MASK}"),
    ("AccessKey=abc123", "abc123", f"AccessKey={MASK}"),
    (
        "DefaultEndpointsProtocol=https;AccountKey=abc123;",
        "abc123",
        f"DefaultEndpointsProtocol=https;AccountKey={MASK};",
    ),
    ("SharedAccessKey=abc123", "abc123", f"SharedAccessKey={MASK}"),
    ("secretkey=abc123", "abc123", f"secretkey={MASK}"),
    ("privatekey=abc123", "abc123", f"privatekey={MASK}"),
    ("MasterKey=abc123", "abc123", f"MasterKey={MASK}"),
    ("GOOGLE_CREDENTIALS=abc123", "abc123", f"GOOGLE_CREDENTIALS={MASK}"),
    ("credential=abc123", "abc123", f"credential={MASK}"),
    ("auth=abc123 next", "abc123", f"auth={MASK} next"),
    ("{'password': 'hunter2x'}", "hunter2x", f"{{'password': '{MASK}'}}"),
    ("PASSWORD\t=\thunter2", "hunter2", f"PASSWORD\t=\t{MASK}"),
    ('DB_PASSWORD="a\\"b c"', 'a\\"b c', f'DB_PASSWORD="{MASK}"'),
    (
        "SOME_SETTING=Zx8Kq2LmN4pR7sT1vW3yB6dF9gH0jK",
        "Zx8Kq2LmN4pR7sT1vW3yB6dF9gH0jK",
        f"SOME_SETTING={MASK}",
    ),
    (
        "cat > k.pem <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow+/IBAAK=\nQWERTY\n-----END RSA PRIVATE KEY-----\nEOF",
        "MIIEow+/IBAAK=\nQWERTY",
        f"cat > k.pem <<EOF\n-----BEGIN RSA PRIVATE KEY-----{MASK}-----END RSA PRIVATE KEY-----\nEOF",
    ),
    (
        "-----BEGIN X509 PRIVATE KEY-----\nQk9EWQ==\n-----END X509 PRIVATE KEY----- done",
        "Qk9EWQ==",
        f"-----BEGIN X509 PRIVATE KEY-----{MASK}-----END X509 PRIVATE KEY----- done",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: 1\n\nlQdGBF==\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQdGBF==",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----{MASK}-----END PGP PRIVATE KEY BLOCK-----",
    ),
    (
        "-----BEGIN EC PRIVATE KEY-----\\r\\nMHcCAQEE\\r\\nb2Fa\\tQ==",  # cut, escaped
        "MHcCAQEE",
        f"-----BEGIN EC PRIVATE KEY-----{MASK}",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXk\\nAAAA",  # cut: no END line
        "b3BlbnNzaC1rZXk",
        f"-----BEGIN OPENSSH PRIVATE KEY-----{MASK}",
    ),
]


@pytest.mark.parametrize(("text", "secret", "masked"), POSITIONS)
def test_secrets_in_known_positions_are_masked_whole(text: str, secret: str, masked: str) -> None:
    assert SCANNER.mask(text) == masked
    assert secret not in SCANNER.mask(text)
    assert SCANNER.any_in([text])


def test_a_json_escaped_quoted_value_with_escapes_inside() -> None:
    import json

    text = json.dumps({"command": 'export API_TOKEN="abc\\\\def ghi"'})
    masked = SCANNER.mask(text)
    assert "abc" not in masked and "ghi" not in masked
    assert masked == '{"command": "export API_TOKEN=\\"****\\""}'


def test_positions_inside_json_escaped_text() -> None:
    import json

    for text, secret, _ in POSITIONS:
        encoded = json.dumps({"command": text})
        masked = SCANNER.mask(encoded)
        assert secret not in masked
        assert json.dumps(secret)[1:-1] not in masked
        json.loads(masked)  # masking keeps the JSON valid


def test_entropy_and_randomness() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("ab") == 1.0
    assert shannon_entropy("abcd") == 2.0
    assert looks_random("Zx8Kq2LmN4pR7sT1vW3yB6dF9gH0jK")
    assert not looks_random("zx8kq2lmn4pr7st1vw3yb6df9gh0jk")  # no upper case
    assert not looks_random("ZX8KQ2LMN4PR7ST1VW3YB6DF9GH0JK")  # no lower case
    assert not looks_random("ZxaKqbLmNcpRdsTevWfyBgdFhgHijK")  # no digit
    assert not looks_random("Aa1" * 10)  # repetitive: low entropy
    assert MIN_ENTROPY_BITS == 4.0


def test_random_values_need_twenty_characters() -> None:
    assert SCANNER.mask("X=Zx8Kq2LmN4pR7sT1vW3y") == f"X={MASK}"  # 20
    assert SCANNER.mask("X=Zx8Kq2LmN4pR7sT1vW3") == "X=Zx8Kq2LmN4pR7sT1vW3"  # 19


def test_any_in_remembers_clean_texts_without_hiding_new_secrets() -> None:
    scanner = SecretScanner()
    rule_message = "mode auto approves calls"
    for _ in range(3):  # the fixed message is scanned once and then remembered
        assert not scanner.any_in([rule_message, ""])
    assert scanner.any_in([rule_message, f"sent {KEY}"])
    # A text once seen with a secret is never remembered as clean.
    assert scanner.any_in([f"sent {KEY}"])
    assert not scanner.any_in(["x" * 10_000])  # long texts are scanned, not remembered
    assert scanner.any_in(["x" * 10_000 + " " + KEY])
    assert scanner.any_in(["PASSWORD=hunter2"])


def test_the_memory_of_clean_texts_is_bounded_exactly() -> None:
    scanner = SecretScanner()
    for index in range(4096):
        assert scanner.mask(f"clean {index}") == f"clean {index}"
    assert len(scanner._clean) == 4096
    scanner.mask("one more")
    assert list(scanner._clean) == ["one more"]  # full: forgotten, then remembered anew
    assert scanner.mask("one more") == "one more"  # remembered texts come back unchanged


def test_entropy_of_exactly_four_bits_is_random_enough() -> None:
    value = "Aa1Bb2Cc3Dd4Ee5F" * 2  # 16 characters, each as often: 4.0 bits
    assert shannon_entropy(value) == 4.0
    assert looks_random(value)


def test_only_the_value_is_judged_random_not_what_precedes_it() -> None:
    value = "FeG2bDDB3deH2gac5FGhBa37"  # 3.92 bits; with the "=" before it, 4.0
    assert not looks_random(value) and looks_random("=" + value)
    assert SCANNER.mask(f"X={value}") == f"X={value}"


def test_a_text_holding_every_literal_is_still_scanned() -> None:
    from sidecar.secrets import DEFAULT_LITERALS

    text = " ".join(DEFAULT_LITERALS) + " " + KEY
    assert [m.kind for m in SCANNER.find(text)] == ["aws_access_key"]


def test_overlapping_spans_give_one_mask() -> None:
    token = "ghp_" + A36
    assert SCANNER.mask(f"TOKEN={token}/more") == f"TOKEN={MASK}"
    jwt = "eyJ" + "a1b2c3d4e5" + ".eyJ" + "f6g7h8i9j0" + "." + "k1l2m3n4o5"
    # A random value stops at the first dot; the JWT it holds goes on past it.
    masked = SCANNER.mask(f"X=Zx8Kq2LmN4pR7sT1vW3yB6dF9gH0jK/{jwt}")
    assert masked == f"X={MASK}{MASK}"


def test_a_short_key_after_other_text_keeps_a_quarter() -> None:
    assert SCANNER.mask("x xoxb-1234567890") == "x xox" + MASK  # 15 characters: 3 kept
    assert SCANNER.mask("x xoxb-12345678901") == "x xoxb" + MASK  # 16 characters: 4 kept


def test_the_memory_of_clean_texts_is_bounded() -> None:
    scanner = SecretScanner()
    for index in range(5000):
        scanner.any_in([f"clean text {index}"])
    assert len(scanner._clean) <= 4096
    assert "clean text 4999" in scanner._clean
    assert "x" * 600 not in scanner._clean
    scanner.any_in(["y" * 512, "z" * 513])
    assert "y" * 512 in scanner._clean and "z" * 513 not in scanner._clean


def test_a_scanner_with_other_patterns_has_no_literal_shortcut() -> None:
    scanner = SecretScanner((("custom", r"\bcustom-[0-9]{4}\b"),))
    assert [m.kind for m in scanner.find("a custom-1234 b")] == ["custom"]
    assert scanner.find("custom-123") == []


def test_pem_blocks_keep_their_labels_and_hide_only_the_body() -> None:
    import json

    untyped = "-----BEGIN PRIVATE KEY-----\nMIIEvQ==\n-----END PRIVATE KEY-----"
    assert SCANNER.mask(untyped) == f"-----BEGIN PRIVATE KEY-----{MASK}-----END PRIVATE KEY-----"
    empty = "-----BEGIN RSA PRIVATE KEY----------END RSA PRIVATE KEY-----"
    assert SCANNER.mask(empty) == empty  # nothing between the labels to hide
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow==\n-----END RSA PRIVATE KEY-----"
    escaped = json.dumps({"key": block, "next": "value"})
    assert SCANNER.mask(escaped) == json.dumps(
        {
            "key": f"-----BEGIN RSA PRIVATE KEY-----{MASK}-----END RSA PRIVATE KEY-----",
            "next": "value",
        }
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE", "pem_block"),
        ("https://u:pw@h", "url_password"),
        ("TOKEN=x", "named_secret"),
        ("--password x", "password_option"),
        ("mysql -pX", "mysql_password"),
        ("sshpass -p x", "sshpass"),
        ("curl -u a:b", "user_password"),
        ("Authorization: x", "authorization"),
        ("v=Zx8Kq2LmN4pR7sT1vW3yB6dF9gH0jK", "random_value"),
    ],
)
def test_each_position_reports_its_kind(text: str, kind: str) -> None:
    assert kind in {m.kind for m in SCANNER.find_positions(text)}
