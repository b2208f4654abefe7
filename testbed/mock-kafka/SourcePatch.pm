# What the mock's single-file patch scripts share: read the librdkafka source file (leaving one
# already patched alone), replace text in it exactly once, write it back. Each script names its
# own marker and replacements; build-mock-kafka.sh hashes this module with them.
package SourcePatch;
use strict;
use warnings;
use Exporter qw(import);
use File::Basename qw(basename);

our @EXPORT_OK = qw(source_to_patch replace_once write_patched);

# The text of $file; exits 0 (nothing to do) when it already holds $marker.
sub source_to_patch {
    my ($file, $marker) = @_;
    open(my $in, "<", $file) or die "cannot read $file: $!\n";
    my $src = do { local $/; <$in> };
    close($in);
    exit 0 if index($src, $marker) >= 0;
    return $src;
}

# Replaces exactly one occurrence of $old in the text $src refers to; dies naming $what and the
# script otherwise, so a source that does not match the pinned version is never patched half.
sub replace_once {
    my ($src, $old, $new, $what) = @_;
    my $n = () = ${$src} =~ /\Q$old\E/g;
    die basename($0, ".pl") . ": $what not found exactly once (found $n)\n" unless $n == 1;
    ${$src} =~ s/\Q$old\E/$new/;
}

sub write_patched {
    my ($file, $src) = @_;
    open(my $out, ">", $file) or die "cannot write $file: $!\n";
    print $out $src;
    close($out) or die "cannot write $file: $!\n";
}

1;
