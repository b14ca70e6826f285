// Unitree's DDS message types (unitree_go, unitree_api) as ROS 2 .msg text, field for field in the order and widths of unitree_sdk2's IDL.
/*
 * Source: github.com/unitreerobotics/unitree_sdk2 (commit 21d0a3b), the idlc-generated headers
 *   include/unitree/idl/go2/{SportModeState_,IMUState_,TimeSpec_,PathPoint_,LowState_,MotorState_,BmsState_}.hpp
 *   include/unitree/idl/hg/BmsState_.hpp (the G1's battery: unitree_hg's LowState_ has no BMS; the
 *     G1 publishes BmsState_ on rt/lf/bmsstate, as unitree_mujoco's G1 bridge and unitree_sdk2_python's
 *     G1 examples subscribe to it; include/unitree/robot/g1/common/terminations.hpp reads its `soc`)
 *   include/unitree/robot/internal/internal_idl_decl/{Request_,RequestHeader_,RequestIdentity_,
 *     RequestLease_,RequestPolicy_,Response_,ResponseHeader_,ResponseStatus_}.hpp
 * Each C++ member `T name_` becomes the field `T name` here: std::array<T, N> is the fixed array
 * `T[N]` (no length on the wire), std::vector<T> the sequence `T[]`, std::string `string`, bool
 * `bool`. The DDS type name follows the ROS 2 rule: `unitree_go/SportModeState_` is
 * `unitree_go::msg::dds_::SportModeState_` (src: the same headers' namespaces and class names).
 * All are final structs without keys, XCDR1 (plain CDR) on the wire, as CycloneDDS 0.10 writes them.
 */

const TIME_SPEC = `int32 sec
uint32 nanosec`;

const IMU_STATE = `float32[4] quaternion
float32[3] gyroscope
float32[3] accelerometer
float32[3] rpy
uint8 temperature`;

const PATH_POINT = `float32 t_from_start
float32 x
float32 y
float32 yaw
float32 vx
float32 vy
float32 vyaw`;

const MOTOR_STATE = `uint8 mode
float32 q
float32 dq
float32 ddq
float32 tau_est
float32 q_raw
float32 dq_raw
float32 ddq_raw
uint8 temperature
uint32 lost
uint32[2] reserve`;

const BMS_STATE = `uint8 version_high
uint8 version_low
uint8 status
uint8 soc
int32 current
uint16 cycle
uint8[2] bq_ntc
uint8[2] mcu_ntc
uint16[15] cell_vol`;

/** Message definitions by ROS type name, each with the types it uses after `MSG:` lines (rosmsg's format). */
export const UNITREE_MSGS: Record<string, string> = {
  'unitree_go/SportModeState_': `unitree_go/TimeSpec_ stamp
uint32 error_code
unitree_go/IMUState_ imu_state
uint8 mode
float32 progress
uint8 gait_type
float32 foot_raise_height
float32[3] position
float32 body_height
float32[3] velocity
float32 yaw_speed
float32[4] range_obstacle
int16[4] foot_force
float32[12] foot_position_body
float32[12] foot_speed_body
unitree_go/PathPoint_[10] path_point
================================================================================
MSG: unitree_go/TimeSpec_
${TIME_SPEC}
================================================================================
MSG: unitree_go/IMUState_
${IMU_STATE}
================================================================================
MSG: unitree_go/PathPoint_
${PATH_POINT}`,
  'unitree_go/LowState_': `uint8[2] head
uint8 level_flag
uint8 frame_reserve
uint32[2] sn
uint32[2] version
uint16 bandwidth
unitree_go/IMUState_ imu_state
unitree_go/MotorState_[20] motor_state
unitree_go/BmsState_ bms_state
int16[4] foot_force
int16[4] foot_force_est
uint32 tick
uint8[40] wireless_remote
uint8 bit_flag
float32 adc_reel
uint8 temperature_ntc1
uint8 temperature_ntc2
float32 power_v
float32 power_a
uint16[4] fan_frequency
uint32 reserve
uint32 crc
================================================================================
MSG: unitree_go/IMUState_
${IMU_STATE}
================================================================================
MSG: unitree_go/MotorState_
${MOTOR_STATE}
================================================================================
MSG: unitree_go/BmsState_
${BMS_STATE}`,
  'unitree_go/BmsState_': BMS_STATE,
  // The G1's battery (include/unitree/idl/hg/BmsState_.hpp): soc in percent, current in mA, cell voltages in mV.
  'unitree_hg/BmsState_': `uint8 version_high
uint8 version_low
uint8 fn
uint16[40] cell_vol
uint32[3] bmsvoltage
int32 current
uint8 soc
uint8 soh
int16[12] temperature
uint16 cycle
uint16 manufacturer_date
uint32[5] bmsstate
uint32[3] reserve`,
  'unitree_api/Request_': `unitree_api/RequestHeader_ header
string parameter
uint8[] binary
================================================================================
MSG: unitree_api/RequestHeader_
unitree_api/RequestIdentity_ identity
unitree_api/RequestLease_ lease
unitree_api/RequestPolicy_ policy
================================================================================
MSG: unitree_api/RequestIdentity_
int64 id
int64 api_id
================================================================================
MSG: unitree_api/RequestLease_
int64 id
================================================================================
MSG: unitree_api/RequestPolicy_
int32 priority
bool noreply`,
  'unitree_api/Response_': `unitree_api/ResponseHeader_ header
string data
uint8[] binary
================================================================================
MSG: unitree_api/ResponseHeader_
unitree_api/RequestIdentity_ identity
unitree_api/ResponseStatus_ status
================================================================================
MSG: unitree_api/RequestIdentity_
int64 id
int64 api_id
================================================================================
MSG: unitree_api/ResponseStatus_
int32 code`,
};

/** Sport API ids of the Go2 (include/unitree/robot/go2/sport/sport_api.hpp); parameters are JSON (`Move`: {"x","y","z"} = vx, vy, vyaw). */
export const GO2_SPORT_API = {
  Damp: 1001,
  BalanceStand: 1002,
  StopMove: 1003,
  StandUp: 1004,
  StandDown: 1005,
  RecoveryStand: 1006,
  Euler: 1007,
  Move: 1008,
  Sit: 1009,
  RiseSit: 1010,
  SpeedLevel: 1015,
  Hello: 1016,
  Stretch: 1017,
  Content: 1020,
  Dance1: 1022,
  Dance2: 1023,
  Pose: 1028,
  Scrape: 1029,
  FrontFlip: 1030,
  FrontJump: 1031,
  FrontPounce: 1032,
  Heart: 1036,
} as const;

/**
 * G1 locomotion API (include/unitree/robot/g1/loco/g1_loco_api.hpp, g1_loco_client.hpp): the same
 * `sport` service; SetVelocity {"velocity":[vx,vy,omega],"duration":s}, StopMove = SetVelocity(0,0,0),
 * SetFsmId {"data":id} (Damp 1, Squat 2, Sit 3, StandUp 4), SetTaskId {"data":id} (WaveHand 0, ShakeHand 2/3).
 */
export const G1_LOCO_API = { SetFsmId: 7101, SetVelocity: 7105, SetTaskId: 7106 } as const;
