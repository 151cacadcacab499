# The tf.config section: list devices, keep two GPUs visible, then memory growth or logical
# devices (virtual GPUs on GPU:0; two logical CPUs where there is no GPU).
import tensorflow as tf

memory_growth = False
gpus = tf.config.list_physical_devices(device_type='GPU')
cpus = tf.config.list_physical_devices(device_type='CPU')
print(gpus, cpus)

tf.config.set_visible_devices(devices=gpus[0:2], device_type='GPU')
if memory_growth:
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(device=gpu, enable=True)
elif gpus:
    tf.config.set_logical_device_configuration(
        gpus[0],
        [tf.config.LogicalDeviceConfiguration(memory_limit=2048),
         tf.config.LogicalDeviceConfiguration(memory_limit=2048)])
else:
    tf.config.set_logical_device_configuration(
        cpus[0],
        [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
devices = tf.config.list_logical_devices('GPU' if gpus else 'CPU')
print(devices)
print("Number of devices:", len(devices))
