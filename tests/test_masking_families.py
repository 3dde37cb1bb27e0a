"""Secret families a black-box probe still found in clear in the decision log.

Each case names a family (a program's password option, a header, a DSN form, a token
prefix) with our own variants; the value must not survive masking in any of them,
neither as written nor inside JSON (the decision log holds canonical JSON arguments).
Key-shaped samples are assembled from parts so the repository holds no key-shaped literal.
"""

from __future__ import annotations

import json

import pytest

from sidecar.secrets import SecretScanner

SCANNER = SecretScanner()
PW = "Qx4" + "vTr9wLm2"  # mixed, as a password would be

# (family, text, the secret it holds)
FAMILIES: list[tuple[str, str, str]] = [
    # quoted values attached to mysql -p
    ("mysql -p'…'", f"mysql -uroot -p'{PW}' shop", PW),
    ('mysql -p"…"', f'mysql -u root -p"{PW}" shop', PW),
    ("mysqldump -p'…'", f"mysqldump --single-transaction -p'{PW} x' shop", f"{PW} x"),
    ('mariadb -p"…" in a pipeline', f'cat a.sql | mariadb -p"{PW}" shop', PW),
    # headers
    ("curl -H Bearer", f"curl -H 'Authorization: Bearer {PW}' https://api.example", PW),
    ("curl -H Basic", f'curl -H "Authorization: Basic {PW}==" https://x.example', PW),
    ("curl -H Cookie", f"curl -H 'Cookie: session={PW}; theme=dark' https://x.example", PW),
    ("curl -b cookie", f"curl -b 'sid={PW}' https://x.example", PW),
    ("curl X-Api-Key", f"curl -H 'X-Api-Key: {PW}' https://x.example", PW),
    ("curl X-Auth-Token", f"curl -H 'X-Auth-Token: {PW}' https://x.example", PW),
    ("curl Private-Token", f"curl --header 'PRIVATE-TOKEN: {PW}' https://gl.example", PW),
    ("curl X-Goog-Api-Key", f"curl -H 'x-goog-api-key: {PW}' https://x.example", PW),
    # cloud CLIs
    ("aws configure set", f"aws configure set aws_secret_access_key {PW}", PW),
    ("aws configure set token", f"aws configure set aws_session_token {PW} --profile p", PW),
    ("--aws-secret-access-key", f"tool --aws-secret-access-key {PW} --region x", PW),
    ("--client-secret=", f"az ad sp create --client-secret={PW}", PW),
    ("az login -p", f"az login --service-principal -u app -p {PW} --tenant t", PW),
    # password options of common programs
    ("docker login -p", f"docker login -u me -p {PW} registry.example", PW),
    ("podman login --password", f"podman login --username me --password {PW} reg", PW),
    ("helm registry login -p", f"helm registry login reg.example -u me -p{PW}", PW),
    ("--pass", f"./tool --pass {PW}", PW),
    ("--pw", f"./tool --pw={PW} --verbose", PW),
    ("--pwd", f"./tool --pwd {PW}", PW),
    ("--credentials", f"./tool --credentials {PW}", PW),
    ("--db-password-value", f"./tool --db-password {PW}", PW),
    ("SSHPASS=", f"SSHPASS={PW} sshpass -e ssh u@h", PW),
    ("sshpass -p'…'", f"sshpass -p'{PW}' ssh u@h", PW),
    ("REDISCLI_AUTH=", f"REDISCLI_AUTH={PW} redis-cli ping", PW),
    ("redis-cli -a", f"redis-cli -h cache -a {PW} ping", PW),
    ("redis-cli -a quoted", f"redis-cli -a '{PW}' --no-auth-warning ping", PW),
    ("openssl -passin", f"openssl rsa -in k.pem -passin pass:{PW}", PW),
    ("openssl -passout", f"openssl genrsa -aes256 -passout pass:{PW} 2048", PW),
    ("openssl -pass", f"openssl enc -aes-256-cbc -pass pass:{PW} -in f", PW),
    ("openssl -k", f"openssl enc -aes-256-cbc -k {PW} -in f", PW),
    ("zip -P", f"zip -r -P {PW} out.zip dir", PW),
    ("unzip -P", f"unzip -P {PW} out.zip", PW),
    ("7z -p", f"7z a -p{PW} out.7z dir", PW),
    ("smbclient -U user%pw", f"smbclient //h/share -U user%{PW}", PW),
    ("smbclient --user=user%pw", f"smbclient //h/share --user=dom/user%{PW}", PW),
    ("ldapsearch -w", f"ldapsearch -x -D cn=admin -w {PW} -b dc=x", PW),
    ("ldapmodify -w quoted", f"ldapmodify -D cn=admin -w '{PW}' -f x.ldif", PW),
    ("keytool -storepass", f"keytool -list -keystore k.jks -storepass {PW}", PW),
    ("keytool -keypass", f"keytool -genkey -keypass {PW} -alias a", PW),
    ("keytool -srcstorepass", f"keytool -importkeystore -srcstorepass {PW} -x", PW),
    ("useradd -p", f"useradd -m -p {PW} bob", PW),
    ("usermod -p", f"usermod -p '{PW}' bob", PW),
    ("htpasswd -b", f"htpasswd -b .htpasswd user {PW}", PW),
    ("htpasswd -cb", f"htpasswd -cb /etc/nginx/.htpasswd admin {PW}", PW),
    ("htpasswd -nb", f"htpasswd -nbB admin {PW}", PW),
    ("chpasswd", f"echo 'root:{PW}' | chpasswd", PW),
    ("chpasswd via sudo", f'echo "bob:{PW}" | sudo chpasswd', PW),
    ("chpasswd here-string", f"chpasswd <<< 'bob:{PW}'", PW),
    ("sudo -S", f"echo {PW} | sudo -S apt update", PW),
    ("sudo -S quoted", f"echo '{PW}' | sudo -kS whoami", PW),
    ("passwd --stdin", f"echo {PW} | passwd --stdin bob", PW),
    ("ansible become pass", f"ansible-playbook x.yml -e ansible_become_pass={PW}", PW),
    ("kubectl from-literal", f"kubectl create secret generic s --from-literal=password={PW}", PW),
    ("helm --set", f"helm install x ./c --set db.password={PW}", PW),
    ("docker -e", f"docker run -e POSTGRES_PASSWORD={PW} postgres", PW),
    # DSNs
    ("go mysql dsn", f"./app --dsn 'root:{PW}@tcp(db:3306)/app'", PW),
    ("go mysql dsn unix", f"DSN=app:{PW}@unix(/run/mysqld.sock)/app ./app", PW),
    ("url userinfo with @ in password", f"psql postgres://app:{PW}@db:5432/app", PW),
    ("jdbc password=", f"jdbc:mysql://db:3306/app?user=app&password={PW}&ssl=true", PW),
    ("jdbc ;password=", f"jdbc:sqlserver://db;user=app;password={PW};encrypt=true", PW),
    ("odbc Pwd=", f"Driver={{ODBC}};Server=db;Uid=app;Pwd={PW};", PW),
]

# Token prefixes: shaped, so they are masked (and egress denies sending them).
A = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY"  # 32 mixed characters
TOKENS: list[tuple[str, str]] = [
    ("hugging face", "hf" + "_" + A + "zz"),
    ("npm", "npm" + "_" + A + "Zz90"),
    ("pypi", "pypi" + "-AgEIcHlwaS5vcmc" + A + A),
    ("sendgrid", "SG" + "." + A[:22] + "." + A + A[:11]),
    ("gitlab runner", "glrt" + "-" + A[:20]),
    ("slack app", "xapp" + "-1-" + A),
    ("shopify", "shpat" + "_" + "0123456789abcdef" * 2),
    ("digitalocean", "dop" + "_v1_" + "0123456789abcdef" * 4),
    ("vault", "hvs" + "." + A[:24]),
    ("databricks", "dapi" + "0123456789abcdef" * 2),
    ("grafana service account", "glsa" + "_" + A + "_" + "0a1b2c3d"),
    ("stripe webhook", "whsec" + "_" + A),
    ("age", "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE"),
    ("telegram bot", "123456789" + ":AA" + A + "b"),
]


def _in_json(text: str) -> str:
    return json.dumps({"command": text})


@pytest.mark.parametrize(("family", "text", "secret"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_family_is_masked_as_written_and_in_json(family: str, text: str, secret: str) -> None:
    assert secret not in SCANNER.mask(text), SCANNER.mask(text)
    encoded = _in_json(text)
    masked = SCANNER.mask(encoded)
    assert json.dumps(secret)[1:-1] not in masked, masked
    assert SCANNER.any_in([text])


@pytest.mark.parametrize(("family", "token"), TOKENS, ids=[t[0] for t in TOKENS])
def test_each_token_prefix_is_a_credential_and_is_masked(family: str, token: str) -> None:
    text = f"deploy --with {token} now"
    assert SCANNER.find(text), family  # egress denies sending it
    assert token[6:] not in SCANNER.mask(text)
    assert token[6:] not in SCANNER.mask(_in_json(text))


def test_http_headers_as_json_are_masked() -> None:
    arguments = {
        "url": "https://api.example/v1",
        "headers": {
            "Authorization": f"Bearer {PW}A",
            "authorization": f"Basic {PW}B==",
            "Cookie": f"sid={PW}C; lang=en",
            "X-Api-Key": f"{PW}D",
            "Proxy-Authorization": f"Bearer {PW}E",
        },
        "json": {"user": "app", "pwd": f"{PW}F", "pass": f"{PW}G"},
    }
    masked = SCANNER.mask(json.dumps(arguments))
    for suffix in "ABCDEFG":
        assert f"{PW}{suffix}" not in masked, masked
    # ...and what is not secret stays readable for the audit
    assert "https://api.example/v1" in masked
    assert '"user": "app"' in masked


ORDINARY = [
    "docker login --password-stdin -u ci registry.example.com",
    "zip -r out.zip dir",
    "redis-cli -h cache ping",
    "keytool -list -keystore k.jks",
    "openssl rsa -in k.pem -passin env:KEY_PASS",
    "git log --author 'Ann Lee' --since 2.weeks",
    "useradd -m bob",
    "curl -H 'Accept: application/json' https://x.example",
    "echo hello | sudo tee /etc/motd",
    "PWD=/home/u OLDPWD=/tmp",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_commands_of_those_programs_are_left_alone(text: str) -> None:
    assert SCANNER.mask(text) == text
