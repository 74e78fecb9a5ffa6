package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a YAML document with Jackson's streaming {@link YAMLParser} into a small tree that remembers
 * the line of every field, so a config error can point at it. Jackson's own tree drops locations,
 * which is why the config is not bound with databind.
 *
 * <p>Anchors and aliases are resolved (an alias shares the anchored node), as are merge keys
 * ({@code <<: *base}); fields written in the mapping win over merged ones. Duplicate fields are
 * errors. Scalars stay raw text: {@code ${...}} expansion and type checks happen while binding.
 */
final class YamlTree {

    sealed interface Node permits MapNode, ListNode, Scalar {
        /** 1-based line where the node starts. */
        int line();
    }

    /**
     * A scalar as the parser typed it: VALUE_STRING, VALUE_NUMBER_INT/FLOAT, VALUE_TRUE/FALSE or
     * VALUE_NULL. {@code text} is the raw text (null for VALUE_NULL); {@code number} the parsed value
     * of a number token (YAML allows forms like {@code 32_000} and {@code 0x20}), else null.
     */
    record Scalar(JsonToken token, String text, Number number, int line) implements Node {
        boolean isNull() {
            return token == JsonToken.VALUE_NULL;
        }
    }

    /** A mapping entry; {@code line} is the line of the key, which is where an error should point. */
    record Field(String key, int line, Node value) {
    }

    record MapNode(Map<String, Field> fields, int line) implements Node {
    }

    record ListNode(List<Node> items, int line) implements Node {
    }

    private static final YAMLFactory FACTORY = new YAMLFactory();

    private final YAMLParser parser;
    private final String source;
    private final Map<String, Node> anchors = new HashMap<>();

    private YamlTree(YAMLParser parser, String source) {
        this.parser = parser;
        this.source = source;
    }

    /** The document's root, or null for an empty document. */
    static Node read(String yaml, String source) throws ConfigException {
        try (YAMLParser parser = (YAMLParser) FACTORY.createParser(yaml)) {
            YamlTree tree = new YamlTree(parser, source);
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            Node root = tree.node(first, "");
            if (parser.nextToken() != null) {
                throw new ConfigException("yaml: only one YAML document is allowed per config file"
                        + ConfigReader.at(source, tree.line()));
            }
            return root;
        } catch (StreamReadException e) {
            throw syntaxError(e, source);
        } catch (IOException e) {
            throw new ConfigException("yaml: cannot read the YAML" + ConfigReader.at(source, 1));
        }
    }

    private Node node(JsonToken token, String path) throws IOException, ConfigException {
        int line = line();
        String anchor = parser.getObjectId();
        Node node;
        switch (token) {
            case START_OBJECT -> node = mapping(path, line);
            case START_ARRAY -> {
                List<Node> items = new ArrayList<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    items.add(node(t, path + "[" + items.size() + "]"));
                }
                node = new ListNode(List.copyOf(items), line);
            }
            default -> {
                if (parser.isCurrentAlias()) {
                    Node target = anchors.get(parser.getText());
                    if (target == null) {
                        throw new ConfigException(ConfigReader.pathOrRoot(path) + ": alias *" + parser.getText()
                                + " names no anchor defined before it" + ConfigReader.at(source, line));
                    }
                    return target;
                }
                boolean isNumber = token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT;
                node = new Scalar(token, token == JsonToken.VALUE_NULL ? null : parser.getText(),
                        isNumber ? parser.getNumberValue() : null, line);
            }
        }
        if (anchor != null) {
            anchors.put(anchor, node);
        }
        return node;
    }

    private MapNode mapping(String path, int line) throws IOException, ConfigException {
        Map<String, Field> fields = new LinkedHashMap<>();
        List<Field> merges = new ArrayList<>();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
            String key = parser.currentName();
            int keyLine = line();
            String fieldPath = path.isEmpty() ? key : path + "." + key;
            Node value = node(parser.nextToken(), fieldPath);
            if (key.equals("<<")) {
                merges.add(new Field(key, keyLine, value));
            } else if (fields.putIfAbsent(key, new Field(key, keyLine, value)) != null) {
                throw new ConfigException(fieldPath + ": duplicate field (first at line "
                        + fields.get(key).line() + ")" + ConfigReader.at(source, keyLine));
            }
        }
        for (Field merge : merges) {
            List<Node> sources = merge.value() instanceof ListNode list ? list.items() : List.of(merge.value());
            for (Node src : sources) {
                if (!(src instanceof MapNode map)) {
                    throw new ConfigException(ConfigReader.pathOrRoot(path) + ": a merge key (<<) takes a mapping"
                            + " or a list of mappings" + ConfigReader.at(source, merge.line()));
                }
                map.fields().forEach(fields::putIfAbsent); // written fields, then earlier merges, win
            }
        }
        return new MapNode(fields, line);
    }

    private int line() {
        return parser.currentTokenLocation().getLineNr();
    }

    /**
     * Only SnakeYAML's problem text and line: its full message quotes the offending line of the
     * file, which may hold a secret.
     */
    private static ConfigException syntaxError(StreamReadException e, String source) {
        if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException marked
                && marked.getProblemMark() != null) {
            String problem = marked.getProblem() == null ? "invalid YAML" : marked.getProblem();
            return new ConfigException("yaml: invalid YAML: " + problem.strip()
                    + ConfigReader.at(source, marked.getProblemMark().getLine() + 1));
        }
        int line = e.getLocation() == null ? 1 : Math.max(1, e.getLocation().getLineNr());
        return new ConfigException("yaml: invalid YAML" + ConfigReader.at(source, line));
    }
}
