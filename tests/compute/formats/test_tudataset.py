from __future__ import annotations

import shutil

import pytest

from compute.formats import InputError, iter_tweets, read


def test_it_reads_spreading_graphs(fdata):
    res = read("tudataset/good")
    g = res.graphs
    c = g.cascades
    assert res.format == "tudataset" and res.tweets is None and res.report.n_good == 3
    assert c.node_offsets.tolist() == [0, 4, 5, 8]
    assert c.tweet_ids.tolist() == [1, 2, 3]  # graph ids
    assert c.user_ids.tolist() == [1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008]
    assert c.followers.tolist() == [10, 20, 30, 40, 50, 60.5, 70, 80]
    assert c.unit == "followers" and c.times is None and g.orphans == "given"
    # publisher = the unique sink; a one-node graph's node publishes it
    assert c.publisher.tolist() == [0, 4, 5]
    # edge (i, j): i's value flows to j -> (src, dst) = (i-1, j-1), grouped by graph
    assert g.edge_offsets.tolist() == [0, 3, 3, 6]
    assert list(zip(g.edge_src.tolist(), g.edge_dst.tolist())) == [(1, 0), (2, 0), (3, 1), (6, 5), (7, 6), (7, 5)]
    assert c.labels.tolist() == ["false", "true", "unverified"]
    assert res.labels == {1: "false", 2: "true", 3: "unverified"}


@pytest.mark.parametrize(
    "where", ["tudataset/labels_only/RSG", "tudataset/labels_only/RSG_A.txt", "tudataset/labels_only"]
)
def test_it_takes_a_folder_a_prefix_or_a_file_of_the_set(fdata, where):
    g = read(where).graphs
    c = g.cascades
    assert c.unit == "retweeters" and c.followers.tolist() == [1, 1, 1]  # node labels: followers unknown
    assert c.user_ids.tolist() == [11, 12, 13] and c.publisher.tolist() == [0]


def test_it_names_the_first_bad_record_in_strict_mode(fdata):
    with pytest.raises(InputError, match=r"^tudataset/bad/DS_A.txt:5: field 'i': not an integer id: 'x'$"):
        read("tudataset/bad")


def test_it_drops_graphs_without_a_single_publisher(fdata):
    res = read("tudataset/bad", mode="skip-bad")
    assert [str(r) for r in res.report.shown] == [
        "tudataset/bad/DS_A.txt:5: field 'i': not an integer id: 'x'",
        "tudataset/bad/DS_A.txt:6: edge joins two graphs: 3 (graph 1), 9 (graph 3)",
        "tudataset/bad/DS_A.txt: no single publisher: graph 2 has 2 sinks (want exactly one node with "
        "out-degree 0 and in-degree > 0; it has 4 nodes)",
        "tudataset/bad/DS_A.txt: no single publisher: graph 3 has no sink (want exactly one node with "
        "out-degree 0 and in-degree > 0; it has 2 nodes)",
    ]
    g = res.graphs
    assert g.cascades.tweet_ids.tolist() == [1] and g.cascades.user_ids.tolist() == [1, 2, 3]
    assert g.edge_src.tolist() == [1, 2] and g.edge_dst.tolist() == [0, 0]
    assert res.report.by_reason["no single publisher"] == 2


def test_it_refuses_graphs_whose_nodes_are_not_consecutive(fdata):
    msg = r"^tudataset/unsorted/DS_graph_indicator.txt:3: field 'graph_id': graph ids must not decrease"
    with pytest.raises(InputError, match=msg):
        read("tudataset/unsorted")
    res = read("tudataset/unsorted", mode="skip-bad")
    assert res.graphs is None and res.report.n_bad == 1


def test_it_checks_the_node_file_matches_the_graph_indicator(fdata, tmp_path):
    d = tmp_path / "ds"
    shutil.copytree(fdata / "tudataset/good", d)
    (d / "DS_node_attributes.txt").write_text("1, 2\n")
    with pytest.raises(InputError, match=r"DS_node_attributes.txt: has 1 node lines, the graph indicator has 8"):
        read(d)
    (d / "DS_node_attributes.txt").unlink()
    with pytest.raises(InputError, match="no node file"):
        read(d, "tudataset")


def test_it_drops_the_graph_of_a_bad_node_line(fdata, tmp_path):
    d = tmp_path / "ds"
    shutil.copytree(fdata / "tudataset/good", d)
    lines = (d / "DS_node_attributes.txt").read_text().splitlines()
    lines[5] = "1006, -3"
    (d / "DS_node_attributes.txt").write_text("\n".join(lines) + "\n")
    res = read(d, mode="skip-bad")
    assert [str(r) for r in res.report.shown] == [
        f"{d}/DS_node_attributes.txt:6: field 'followers_count': negative count: '-3'"
    ]
    assert res.graphs.cascades.tweet_ids.tolist() == [1, 2]
    assert res.labels == {1: "false", 2: "true"}


def test_it_has_no_tweets_to_stream(fdata):
    with pytest.raises(ValueError, match="holds no tweets"):
        next(iter_tweets("tudataset/good"))
