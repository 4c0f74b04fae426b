# frozen_string_literal: true

require_relative "test_helper"

class RoutesTest < DetailsTest
  CONTRACT_BODY = '{"id":0,"author":"William Shakespeare","year":1595,"type":"paperback","pages":200,' \
                  '"publisher":"PublisherA","language":"English","ISBN-10":"1234567890","ISBN-13":"123-1234567890"}'
  BAD_ID = '{"error":"please provide numeric product id"}'

  def setup
    @port = start_server.port
  end

  def test_details_body_is_the_contract_bytes
    res = http(@port, "GET", "/details/0")
    assert_equal 200, res.status
    assert_equal "application/json", res.headers["content-type"]
    assert_equal CONTRACT_BODY, res.body
    assert_equal CONTRACT_BODY.bytesize.to_s, res.headers["content-length"]
  end

  def test_id_is_echoed_as_a_json_number
    {
      "1" => "1", "42" => "42", "007" => "7", "-5" => "-5", "+3" => "3", "-0" => "0",
      "123456789012345678901234567890" => "123456789012345678901234567890",
      "1?u=normal" => "1", "%31%32" => "12"
    }.each do |raw, echoed|
      res = http(@port, "GET", "/details/#{raw}")
      assert_equal 200, res.status, raw
      assert_equal CONTRACT_BODY.sub('"id":0', "\"id\":#{echoed}"), res.body, raw
    end
  end

  def test_missing_or_non_numeric_id_is_400
    ["/details", "/details/", "/details/abc", "/details/1.5", "/details/0x10", "/details/1e3",
     "/details/%20", "/details/1a", "/details/-", "/details/?id=1"].each do |path|
      res = http(@port, "GET", path)
      assert_equal 400, res.status, path
      assert_equal "application/json", res.headers["content-type"], path
      assert_equal BAD_ID, res.body, path
    end
  end

  def test_health
    res = http(@port, "GET", "/health")
    assert_equal 200, res.status
    assert_equal "application/json", res.headers["content-type"]
    assert_equal '{"status":"Details is healthy"}', res.body
  end

  def test_unknown_paths_are_404_json_for_every_method
    %w[GET HEAD POST PUT DELETE PATCH OPTIONS BREW].each do |method|
      ["/", "/detail/1", "/details/1/2", "/details/1/", "/detailsx", "/healthz", "/productpage"].each do |path|
        res = http(@port, method, path)
        assert_equal 404, res.status, "#{method} #{path}"
        assert_equal "application/json", res.headers["content-type"]
        assert_equal(method == "HEAD" ? "" : '{"error":"not found"}', res.body, "#{method} #{path}")
      end
    end
  end

  def test_known_paths_answer_405_with_allow_for_other_methods
    %w[POST PUT DELETE PATCH OPTIONS TRACE BREW].each do |method|
      ["/details/1", "/details/abc", "/details", "/health", "/metrics"].each do |path|
        res = http(@port, method, path)
        assert_equal 405, res.status, "#{method} #{path}"
        assert_equal "GET, HEAD", res.headers["allow"]
        assert_equal '{"error":"method not allowed"}', res.body
      end
    end
  end

  def test_head_answers_like_get_without_a_body
    sock = connect(@port)
    ["/details/0", "/details/abc", "/health", "/nope"].each do |path|
      get = http(@port, "GET", path)
      head = http(@port, "HEAD", path, sock: sock)
      assert_equal get.status, head.status, path
      assert_equal get.headers["content-length"], head.headers["content-length"], path
      assert_equal get.headers["content-type"], head.headers["content-type"], path
    end
    # Had HEAD sent body bytes, they would now be read as this response.
    assert_equal '{"status":"Details is healthy"}', http(@port, "GET", "/health", sock: sock).body
  ensure
    sock&.close
  end

  # No route reads a body: a request with one is answered and the
  # connection closed, so nothing in the body is ever read as a request; a
  # chunked one on a method that may carry a body is refused 411.
  def test_a_body_is_never_read_and_closes_the_connection
    {
      "POST /details/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n" => 405,
      "GET /details/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n" => 200,
      "POST /details/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" => 411,
      "GET /details/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" => 200
    }.each do |head, status|
      sock = connect(@port)
      sock.write("#{head}GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
      res = read_response(sock)
      assert_equal [status, "close"], [res.status, res.headers["connection"]], head
      assert closed_by_peer?(sock), head
    ensure
      sock&.close
    end
  end

  # WEBrick refuses a POST or PUT without Content-Length (411 while looking
  # for the body after the answer) and then closes; the answer says so
  # instead of announcing keep-alive.
  def test_a_post_without_length_is_answered_with_connection_close
    sock = connect(@port)
    sock.write("POST /details/1 HTTP/1.1\r\nHost: x\r\n\r\n")
    res = read_response(sock)
    assert_equal [405, "close", "GET, HEAD"], [res.status, res.headers["connection"], res.headers["allow"]]
    assert closed_by_peer?(sock)
  ensure
    sock&.close
  end

  def test_a_delete_without_a_body_keeps_the_connection
    sock = connect(@port)
    sock.write("DELETE /details/1 HTTP/1.1\r\nHost: x\r\n\r\n")
    res = read_response(sock)
    assert_equal [405, "Keep-Alive"], [res.status, res.headers["connection"]]
    assert_equal 200, http(@port, "GET", "/details/2", sock: sock).status
  ensure
    sock&.close
  end

  # Only "chunked" frames a body unambiguously (hostile_test.rb has the rest).
  def test_an_unreadable_body_gets_connection_close_not_a_silent_close
    sock = connect(@port)
    sock.write("POST /details/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nxx")
    res = read_response(sock)
    assert_equal 400, res.status
    assert_equal "close", res.headers["connection"]
    assert closed_by_peer?(sock)
  ensure
    sock&.close
  end
end
