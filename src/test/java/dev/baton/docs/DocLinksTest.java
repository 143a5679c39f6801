package dev.baton.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.Heading;
import org.commonmark.node.Image;
import org.commonmark.node.Link;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.Parser;
import org.junit.jupiter.api.Test;

/**
 * A newcomer goes from the README to any answer by links, so every relative link in the
 * repository's Markdown (README, CONTRIBUTING, CHANGELOG, docs/, clients/, examples/) must lead to
 * a file of the repository, and every {@code #anchor} to a heading there, as GitHub names it.
 * Users have only the repository: no link and no text may point outside it.
 */
class DocLinksTest {

    private static final Path ROOT = Path.of("").toAbsolutePath().normalize();
    private static final Parser MARKDOWN = Parser.builder().extensions(List.of(TablesExtension.create())).build();

    @Test
    void every_relative_link_and_anchor_of_the_docs_resolves_inside_the_repository() throws IOException {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        int checked = 0;
        for (Path file : markdownFiles()) {
            for (String target : links(file)) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // http:, mailto: ...: not a file of the repository
                }
                checked++;
                String path = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
                Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
                String where = ROOT.relativize(file) + ": " + target;
                if (!resolved.startsWith(ROOT)) {
                    broken.add(where + " (outside the repository)");
                } else if (!Files.exists(resolved)) {
                    broken.add(where + " (no such file)");
                } else if (anchor != null && resolved.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(resolved, DocLinksTest::headingIds).contains(anchor)) {
                    broken.add(where + " (no such heading)");
                }
            }
        }

        assertThat(broken).as("broken links").isEmpty();
        assertThat(checked).as("relative links checked").isGreaterThan(50);
    }

    @Test
    void nothing_in_the_docs_or_the_contract_refers_to_files_outside_the_repository() throws IOException {
        List<Path> texts = new ArrayList<>(markdownFiles());
        texts.add(ROOT.resolve("openapi.yaml"));
        List<String> found = new ArrayList<>();
        for (Path file : texts) {
            String text = Files.readString(file);
            if (text.contains("../shared") || text.contains("shared/design")) {
                found.add(ROOT.relativize(file).toString());
            }
        }
        assertThat(found).as("files that refer outside the repository").isEmpty();
    }

    private static List<Path> markdownFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        for (String top : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
            files.add(ROOT.resolve(top));
        }
        for (String dir : List.of("docs", "clients", "examples")) {
            if (Files.isDirectory(ROOT.resolve(dir))) {
                try (Stream<Path> walk = Files.walk(ROOT.resolve(dir))) {
                    walk.filter(p -> p.toString().endsWith(".md")).filter(p -> !p.toString().contains("node_modules"))
                            .sorted().forEach(files::add);
                }
            }
        }
        return files;
    }

    private static List<String> links(Path file) throws IOException {
        List<String> targets = new ArrayList<>();
        MARKDOWN.parse(Files.readString(file)).accept(new AbstractVisitor() {
            @Override
            public void visit(Link link) {
                targets.add(link.getDestination());
                visitChildren(link);
            }

            @Override
            public void visit(Image image) {
                targets.add(image.getDestination());
            }
        });
        return targets;
    }

    /** The ids GitHub gives the headings of a Markdown file: slugs, with -1, -2 ... for repeats. */
    private static Set<String> headingIds(Path file) {
        Set<String> ids = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        try {
            MARKDOWN.parse(Files.readString(file)).accept(new AbstractVisitor() {
                @Override
                public void visit(Heading heading) {
                    String slug = ApiReference.slug(text(heading));
                    int repeats = seen.merge(slug, 1, Integer::sum) - 1;
                    ids.add(repeats == 0 ? slug : slug + "-" + repeats);
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return ids;
    }

    private static String text(Node node) {
        StringBuilder text = new StringBuilder();
        for (Node child = node.getFirstChild(); child != null; child = child.getNext()) {
            if (child instanceof Text t) {
                text.append(t.getLiteral());
            } else if (child instanceof Code c) {
                text.append(c.getLiteral());
            } else {
                text.append(text(child));
            }
        }
        return text.toString();
    }
}
