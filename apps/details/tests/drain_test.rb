# frozen_string_literal: true

require_relative "test_helper"
require "details/serving/plugged_listener"

# What the drain answers that WEBrick alone would reset: connections queued
# on the listening socket when it closes (DESIGN.md, "Closing the listening
# socket without a reset"), and requests on connections accepted before.
class DrainTest < DetailsTest
  def queued_clients(server, count)
    Array.new(count) { Socket.tcp("127.0.0.1", server.local_address.ip_port) }
  end

  # What a plain close does to connections still queued: the control.
  def test_a_plain_close_resets_queued_connections
    server = TCPServer.new("127.0.0.1", 0)
    clients = queued_clients(server, 3)
    server.close
    clients.each { |c| assert_raises(Errno::ECONNRESET) { c.read } }
  end

  def test_close_answers_every_queued_connection_and_then_refuses
    server = TCPServer.new("127.0.0.1", 0)
    port = server.local_address.ip_port
    clients = queued_clients(server, 5)
    served = 0
    serve = lambda do |sock|
      served += 1
      Thread.new { sock.write("ok") && sock.close }
    end
    until_time = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
    logger = Details::Log.new("info", log = StringIO.new)
    Details::Serving::PluggedListener.new(server, serve: serve, until_time: until_time, logger: logger).close
    assert_equal 5, served, "the plug is not served"
    clients.each { |c| assert_equal "ok", c.read }
    assert_raises(Errno::ECONNREFUSED) { Socket.tcp("127.0.0.1", port) }
    assert_match(/port #{port} closed, plugged; 5 connections queued on it answered/, log.string)
  end

  # WEBrick's #run answers nothing once the server has left :Running; a
  # connection the drain accepts has its request answered, with a close.
  def test_a_connection_accepted_in_the_drain_is_answered
    server = start_server
    server.stop
    listener = TCPServer.new("127.0.0.1", 0)
    client = Socket.tcp("127.0.0.1", listener.local_address.ip_port)
    client.write("GET /details/1 HTTP/1.1\r\nHost: x\r\n\r\n")
    server.serve_accepted(listener.accept).join
    answer = client.read
    assert_match(%r{\AHTTP/1.1 200 }, answer)
    assert_match(/^connection: close\r$/i, answer)
  ensure
    listener&.close
  end

  # Accepted by WEBrick before the drain, its request sent after.
  def test_a_request_on_a_new_connection_accepted_before_the_drain_is_answered
    server = start_server
    client = Socket.tcp("127.0.0.1", server.port)
    eventually { Thread.list.any? { |t| t[:WEBrickSocket] } }
    server.stop
    client.write("GET /details/1 HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = client.read
    assert_match(%r{\AHTTP/1.1 200 }, answer)
    assert_match(/^connection: close\r$/i, answer)
  end
end
